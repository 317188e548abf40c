; Definitions and imports of C (cuedeck-code). A function's name is found by descending
; its declarator (pointers, parentheses), so it has no @name capture here.

(function_definition) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type

(preproc_include path: (string_literal) @import)
