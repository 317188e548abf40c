; Definitions and imports of Python (cuedeck-code). Captures: @definition.<kind> on the
; definition, @name on its name, @import on an import statement.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import
