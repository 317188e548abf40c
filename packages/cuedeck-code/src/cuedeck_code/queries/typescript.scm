; Definitions and imports of TypeScript and TSX (cuedeck-code).

(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(type_alias_declaration name: (_) @name) @definition.type
(internal_module name: (_) @name) @definition.namespace
(module name: (_) @name) @definition.namespace
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

; Functions and classes assigned to a member (`res.send = function send(...)`,
; `exports.parse = ...`, `Foo.prototype.bar = ...`): named by the member, less `this`,
; `exports` and `prototype` (cuedeck_code.symbols); a prototype's member is a method.
(assignment_expression
  left: (member_expression
    object: (member_expression property: (property_identifier) @prototype)
    (#eq? @prototype "prototype")) @name
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.method
(assignment_expression
  left: (member_expression) @name
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(assignment_expression
  left: (member_expression) @name
  right: (class)) @definition.class

(import_statement source: (string) @import)
(export_statement source: (string) @import)
(call_expression
  function: (identifier) @require
  arguments: (arguments . (string) @import)
  (#eq? @require "require"))
