"""The facts of a JavaScript, TypeScript or TSX file (see :mod:`.facts`).

One walk over the tree, as for Python: definitions (functions, classes, methods,
interfaces, types, enums, and ``const f = () => ...``), with a class's ``extends`` and
``implements`` and a function's return type; ``import`` and ``export ... from`` as
bindings to the files they name (a re-export is a binding of the module that writes
it, so an import through an ``index.ts`` follows it); every name in an expression or a
type as a chain; and the names each scope binds (parameters with their type,
``const x = new Foo()``, ``this`` in a class).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.walk_script_types import ScriptTypes

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex
    from cuedeck_code.intel.facts import Chain, Facts

_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_signature"}
)
_METHODS = frozenset({"method_definition", "method_signature", "abstract_method_signature"})
_TYPES = {
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_ANONYMOUS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_SKIP = frozenset({"comment", "string", "regex", "number", "predefined_type", "hash_bang_line"})
_WRAPPERS = frozenset(
    {
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "parenthesized_expression",
        "await_expression",
        "type_assertion",
    }
)


def script_facts(root: Any, data: bytes, path: str, index: PathIndex) -> Facts:
    """The facts of the script at ``path`` whose tree is ``root``."""
    walker = _Walker(data, path, index)
    walker.block(root, "", "")
    return walker.facts


class _Walker(ScriptTypes):
    def qualify(self, scope: str, name: str) -> str:
        return f"{scope}.{name}" if scope else name

    # -- statements ------------------------------------------------------------------------

    def block(self, node: Any, scope: str, owner: str) -> None:
        for child in node.named_children:
            self.node(child, scope, owner)

    def node(self, node: Any, scope: str, owner: str) -> None:
        kind = node.type
        if kind in _CLASSES:
            self.klass(node, scope, owner, None)
        elif kind in _FUNCTIONS or kind in _METHODS:
            self.function(node, scope, owner, None)
        elif kind in _TYPES:
            self.declared_type(node, scope, owner)
        elif kind in ("internal_module", "module"):
            self.namespace(node, scope, owner)
        elif kind == "variable_declarator":
            self.declarator(node, scope, owner)
        elif kind in _ANONYMOUS:
            self.callable(node, scope, owner)
        elif kind == "import_statement":
            self.imports(node, scope)
        elif kind == "export_statement":
            self.export(node, scope, owner)
        elif kind == "public_field_definition":
            self.field(node, scope, owner)
        elif kind == "property_signature" and self.kinds.get(scope) == "interface":
            self.typed_member(node, scope)
            self.block(node, scope, owner)
        elif kind in ("required_parameter", "optional_parameter"):
            self.parameter(node, scope, owner, scope)
        elif kind == "catch_clause":
            parameter = node.child_by_field_name("parameter")
            if parameter is not None:
                self.targets(parameter, scope)
            body = node.child_by_field_name("body")
            if body is not None:
                self.block(body, scope, owner)
        elif kind in ("for_in_statement", "for_of_statement"):
            left = node.child_by_field_name("left")
            if left is not None:
                self.targets(left, scope)
            for child in node.named_children:
                if child is not left:
                    self.node(child, scope, owner)
        elif kind == "pair":
            value = node.child_by_field_name("value")
            key = node.child_by_field_name("key")
            if key is not None and key.type == "computed_property_name":
                self.block(key, scope, owner)
            if value is not None:
                self.node(value, scope, owner)
        elif kind == "shorthand_property_identifier":
            self.ref(scope, owner, "reference", [self.part(node)])
        elif kind in ("jsx_opening_element", "jsx_self_closing_element"):
            name = node.child_by_field_name("name")
            if name is not None and self.text(name)[:1].isupper():
                self.expression(name, scope, owner, "reference")
            for child in node.named_children:
                if child is not name:
                    self.node(child, scope, owner)
        elif kind in ("type_identifier", "nested_type_identifier", "generic_type"):
            self.type_ref(node, scope, owner, "type")
        elif kind in (
            "identifier",
            "this",
            "super",
            "member_expression",
            "call_expression",
            "new_expression",
            "subscript_expression",
            *_WRAPPERS,
        ):
            self.expression(node, scope, owner, "reference")
        elif kind == "return_statement":
            value = node.named_children[0] if node.named_children else None
            if value is not None:
                self.returns(scope, self.expression(value, scope, owner, "reference"))
        elif kind == "template_string":
            for child in node.named_children:
                if child.type == "template_substitution":
                    self.block(child, scope, owner)
        elif kind in _SKIP or kind in ("property_identifier", "statement_identifier"):
            return
        else:
            self.block(node, scope, owner)

    def klass(self, node: Any, scope: str, owner: str, named: str | None) -> str | None:
        name_node = node.child_by_field_name("name")
        name = named or (self.text(name_node) if name_node is not None else None)
        if name is None:
            body = node.child_by_field_name("body")
            if body is not None:
                self.block(body, scope, owner)
            return None
        qual = self.qualify(scope, name)
        self.kinds[qual] = "class"
        flags: dict[str, Any] = {}
        bases: list[Chain] = []
        for child in node.named_children:
            if child.type != "class_heritage":
                continue
            for clause in child.named_children:
                role = "inherit"
                written = (
                    clause.named_children
                    if clause.type in ("extends_clause", "implements_clause")
                    else [clause]  # JavaScript: class A extends B holds B itself
                )
                for base in written:
                    if base.type == "type_arguments":
                        self.block(base, scope, qual)
                        continue
                    if clause.type == "implements_clause":
                        chain = self.type_ref(base, scope, qual, role)
                    else:
                        chain = self.expression(base, scope, qual, role)
                    if chain:
                        bases.append(chain)
        if bases:
            flags["bases"] = bases
        self.facts["defs"].append([qual, "class", *self.lines(node), flags])
        body = node.child_by_field_name("body")
        if body is not None:
            self.block(body, qual, qual)
        return qual

    def declared_type(self, node: Any, scope: str, owner: str) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        qual = self.qualify(scope, self.text(name_node))
        kind = _TYPES[node.type]
        self.kinds[qual] = kind
        flags: dict[str, Any] = {}
        bases: list[Chain] = []
        for child in node.named_children:
            if child.type == "extends_type_clause":
                for base in child.named_children:
                    chain = self.type_ref(base, scope, qual, "inherit")
                    if chain:
                        bases.append(chain)
            elif child is not name_node:  # an object type's methods are the alias's
                self.node(child, scope if kind == "enum" else qual, qual)
        value = node.child_by_field_name("value")
        if value is not None:  # type A = B & Partial<C>: A has B's and C's members
            bases.extend(self.alias_bases(value))
            self.object_members(value, qual)
        if bases:
            flags["bases"] = bases
        self.facts["defs"].append([qual, kind, *self.lines(node), flags])

    def namespace(self, node: Any, scope: str, owner: str) -> None:
        """``namespace N { ... }``: its names are ``N.x``, members of N outside it and
        bare names inside it (``module "m" { ... }`` names nothing)."""
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        inner = scope
        if name is not None and name.type == "identifier":
            inner = self.qualify(scope, self.text(name))
            self.kinds[inner] = "namespace"
            self.facts["defs"].append([inner, "namespace", *self.lines(node), {}])
        if body is not None:
            self.block(body, inner, owner)

    def function(self, node: Any, scope: str, owner: str, named: str | None) -> None:
        name_node = node.child_by_field_name("name")
        name = named or (self.text(name_node) if name_node is not None else None)
        if name is None:
            self.callable(node, scope, owner)
            return
        if name_node is not None and name_node.type == "computed_property_name":
            self.block(name_node, scope, owner)
        qual = self.qualify(scope, name)
        method = self.kinds.get(scope) in ("class", "interface", "type")
        kind = "method" if method else "function"
        self.kinds[qual] = kind
        flags: dict[str, Any] = {}
        if method:
            self.var(qual, "this", "self")
        if any(c.type == "get" for c in node.children):
            flags["property"] = True
        returns = node.child_by_field_name("return_type")
        if returns is not None:
            chain = self.annotation(returns, scope, qual)
            if chain:
                flags["returns"] = chain
        self.facts["defs"].append([qual, kind, *self.lines(node), flags])
        self.signature(node, qual, qual)
        self.gives(qual, flags)

    def callable(self, node: Any, scope: str, owner: str) -> None:
        """An anonymous function: a scope of its own for its parameters and locals,
        ``<N>`` (the N-th anonymous function directly in ``scope``), so that they hide
        the names around it there and only there; its chains stay ``owner``'s."""
        returns = node.child_by_field_name("return_type")
        if returns is not None:
            self.annotation(returns, scope, owner)
        self.signature(node, self.anonymous_scope(scope), owner)

    def signature(self, node: Any, inner: str, owner: str) -> None:
        parameters = node.child_by_field_name("parameters")
        if parameters is not None:
            for child in parameters.named_children:
                if child.type in ("required_parameter", "optional_parameter"):
                    self.parameter(child, inner, owner, inner)
                elif child.type == "identifier":
                    self.var(inner, self.text(child), "local")
                else:
                    self.node(child, inner, owner)
        parameter = node.child_by_field_name("parameter")  # x => ...
        if parameter is not None and parameter.type == "identifier":
            self.var(inner, self.text(parameter), "local")
        for child in node.named_children:
            if child.type == "type_parameters":
                self.block(child, inner, owner)
        body = node.child_by_field_name("body")
        if body is not None and body.type != "statement_block":  # () => value
            self.returns(inner, self.expression(body, inner, owner, "reference"))
        elif body is not None:
            self.node(body, inner, owner)

    def parameter(self, node: Any, scope: str, owner: str, inner: str) -> None:
        pattern = node.child_by_field_name("pattern")
        annotation = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        chain = self.annotation(annotation, scope, owner) if annotation is not None else None
        if value is not None:
            self.node(value, scope, owner)
        for child in node.named_children:
            if child.type == "accessibility_modifier" and pattern is not None and chain:
                # constructor(private client: Client): a field of the class too
                self.var(scope.rpartition(".")[0], self.text(pattern), "annot", chain)
        if pattern is None:
            return
        if pattern.type == "identifier":
            self.var(inner, self.text(pattern), "annot" if chain else "local", chain)
        elif pattern.type != "this":
            self.targets(pattern, inner)

    def annotation(self, node: Any, scope: str, owner: str) -> Chain | None:
        inner = node.named_children[0] if node.named_children else None
        if inner is None:
            return None
        if node.type in ("type_annotation", "type_predicate_annotation", "asserts_annotation"):
            return self.type_ref(inner, scope, owner, "type")
        return self.type_ref(node, scope, owner, "type")

    def type_ref(self, node: Any, scope: str, owner: str, role: str) -> Chain | None:
        """Record a type (its names are references); its chain when it names one type."""
        kind = node.type
        if kind == "type_identifier" or kind == "identifier":
            chain = [self.part(node)]
            self.ref(scope, owner, role, chain)
            return chain
        if kind == "this_type":  # a fluent method returns its receiver
            return [self.part(node, "this")]
        if kind == "nested_type_identifier":
            parts = self.nested(node)
            self.ref(scope, owner, role, parts)
            return parts
        if kind == "type_query" and node.named_children:  # typeof x: x's own type
            return self.expression(node.named_children[0], scope, owner, "reference")
        if kind == "generic_type":
            name = node.child_by_field_name("name")
            for child in node.named_children:
                if child is not name:
                    self.block(child, scope, owner) if child.type == "type_arguments" else None
            return self.type_ref(name, scope, owner, role) if name is not None else None
        if kind in ("member_expression", "call_expression", "expression_with_type_arguments"):
            return self.expression(node, scope, owner, role)
        self.node(node, scope, owner)
        return None

    def declarator(self, node: Any, scope: str, owner: str) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        annotation = node.child_by_field_name("type")
        if name is None:
            return
        if name.type != "identifier":
            found = self.expression(value, scope, owner, "reference") if value else None
            if name.type == "object_pattern" and found and found[-1][0] not in ("[]", "?"):
                self.unpacked(name, found, scope, owner)
            else:
                self.targets(name, scope)
            return
        written = self.text(name)
        if value is not None and value.type in _ANONYMOUS:
            qual = self.qualify(scope, written)
            self.kinds[qual] = "function"
            flags: dict[str, Any] = {}
            returns = value.child_by_field_name("return_type")
            if returns is not None:
                chain = self.annotation(returns, scope, qual)
                if chain:
                    flags["returns"] = chain
            self.facts["defs"].append([qual, "function", *self.lines(node), flags])
            self.var(scope, written, "def")
            self.signature(value, qual, qual)
            self.gives(qual, flags)
            return
        if value is not None and value.type == "class":
            self.klass(value, scope, owner, written)
            self.var(scope, written, "def")
            return
        typed = self.annotation(annotation, scope, owner) if annotation is not None else None
        how, chain = "local", None
        if value is not None:
            found = self.expression(value, scope, owner, "reference")
            if found and found[-1][0] == "()" and all(p[0] not in ("[]", "?") for p in found):
                how, chain = "new", found[:-1]
            elif found and all(p[0] not in ("()", "[]", "?") for p in found):
                how, chain = "alias", found
            elif found is None:
                made = self.fallback_made(value)
                if made:
                    how, chain = "new", made
        if typed:
            how, chain = "annot", typed
            if value is not None:
                self.typed_keys(value, typed, scope, owner)
        self.var(scope, written, how, chain)

    def field(self, node: Any, scope: str, owner: str) -> None:
        name = node.child_by_field_name("name")
        annotation = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if (
            name is not None
            and value is not None
            and value.type in _ANONYMOUS
            and (self.kinds.get(scope) == "class")
        ):  # static create = (...): Foo => ...: a method written as a field
            qual = self.qualify(scope, self.text(name))
            self.kinds[qual] = "method"
            flags: dict[str, Any] = {}
            returns = value.child_by_field_name("return_type")
            if returns is not None:
                found_type = self.annotation(returns, scope, qual)
                if found_type:
                    flags["returns"] = found_type
            self.facts["defs"].append([qual, "method", *self.lines(node), flags])
            self.var(qual, "this", "self")
            self.signature(value, qual, qual)
            self.gives(qual, flags)
            return
        typed = self.annotation(annotation, scope, owner) if annotation is not None else None
        how, chain = "local", None
        if value is not None:
            found = self.expression(value, scope, owner, "reference")
            if value.type == "new_expression" and found:
                how, chain = "new", found[:-1]
        if typed:
            how, chain = "annot", typed
            if value is not None:
                self.typed_keys(value, typed, scope, owner)
        if name is not None and chain:
            self.var(scope, self.text(name), how, chain)

    def lines(self, node: Any) -> list[int]:
        start = node
        while start.parent is not None and start.parent.type in (
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "ambient_declaration",
        ):
            start = start.parent
        row, column = node.end_point
        end = row + 1 if column > 0 or row == node.start_point[0] else row
        return [start.start_point[0] + 1, int(end)]

    # -- expressions -----------------------------------------------------------------------

    def expression(self, node: Any, scope: str, owner: str, role: str) -> Chain | None:
        chain = self.chain(node, scope, owner)
        if chain is None:
            self.node(node, scope, owner) if node.type not in _WRAPPERS else self.block(
                node, scope, owner
            )
            return None
        self.ref(scope, owner, role, chain)
        return chain

    def chain(self, node: Any, scope: str, owner: str) -> Chain | None:
        kind = node.type
        if kind in ("identifier", "this", "super", "type_identifier"):
            return [self.part(node)]
        if kind == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if obj is None or prop is None:
                return None
            return [*self.base(obj, scope, owner), self.part(prop)]
        if kind in ("call_expression", "new_expression"):
            function = node.child_by_field_name("function") or node.child_by_field_name(
                "constructor"
            )
            arguments = node.child_by_field_name("arguments")
            for child in node.named_children:
                if child.type == "type_arguments":
                    self.block(child, scope, owner)
            if arguments is not None:
                self.node(arguments, scope, owner)
            if function is None:
                return None
            return [*self.base(function, scope, owner), self.part(node, "()")]
        if kind == "subscript_expression":
            obj = node.child_by_field_name("object")
            index = node.child_by_field_name("index")
            if index is not None:
                self.node(index, scope, owner)
            if obj is None:
                return None
            return [*self.base(obj, scope, owner), self.part(node, "[]")]
        if kind in _WRAPPERS and node.named_children:
            inner = node.named_children[0]
            for child in node.named_children[1:]:
                self.node(child, scope, owner)
            if inner.type == "object" and kind in ("as_expression", "satisfies_expression"):
                typed = self.named_type(node.named_children[-1])
                if typed:
                    self.typed_keys(inner, typed, scope, owner)
            return self.chain(inner, scope, owner)
        return None

    def base(self, node: Any, scope: str, owner: str) -> Chain:
        found = self.chain(node, scope, owner)
        if found is None:
            self.node(node, scope, owner)
            return [self.part(node, "?")]
        return found
