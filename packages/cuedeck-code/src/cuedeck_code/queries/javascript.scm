; Definitions and imports of JavaScript and JSX (cuedeck-code).

(class_declaration name: (_) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(import_statement source: (string) @import)
(export_statement source: (string) @import)
(call_expression
  function: (identifier) @require
  arguments: (arguments . (string) @import)
  (#eq? @require "require"))
