; Definitions and imports of Ruby (cuedeck-code).

(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.module
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method

(call
  method: (identifier) @require
  arguments: (argument_list . (string) @import)
  (#match? @require "^require(_relative)?$"))
