"""The facts of a Go, Rust, Java, C, C++ or Ruby file (see :mod:`.facts`).

The definitions are the index's own (the language's query, :func:`cuedeck_code.symbols.
definitions`); a walk over the tree adds every name in an expression or a type as a
chain (``a.b()``, ``pkg.Func``, ``Type::new``, ``obj->m()``), each resolved in the
innermost definition around it, the types the syntax gives to names (a typed
parameter or variable, a Go receiver, ``x := NewFoo()``, ``let x = Foo::new()``), a
class's bases, and the imports: Go packages, Java imports and Rust ``use``.
"""

from __future__ import annotations

import bisect
import posixpath
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_code.intel.facts import Chain, Facts, empty, file_namespace
from cuedeck_code.intel.signatures import descendants, is_definition_name, returned_type
from cuedeck_code.intel.walk_base import column_of

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex
    from cuedeck_code.symbols import Found


@attrs.frozen
class Syntax:
    """A language's node types, as the walk needs them."""

    names: frozenset[str]
    #: node type -> (field of the object, field of the member)
    members: dict[str, tuple[str, str]]
    #: node type -> field of what is called (``""``: the member pair above, then a call)
    calls: dict[str, str]
    this: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset({"comment", "line_comment", "block_comment"})
    #: node types whose ``type`` field types the names they declare
    typed: frozenset[str] = frozenset()
    #: node types of a class's bases
    bases: frozenset[str] = frozenset()


_STRINGS = frozenset(
    {
        "string_literal",
        "interpreted_string_literal",
        "raw_string_literal",
        "char_literal",
        "string",
        "string_content",
        "character_literal",
        "system_lib_string",
        "number_literal",
        "integer",
        "float",
        "integer_literal",
        "float_literal",
        "rune_literal",
        "escape_sequence",
    }
)

SYNTAX: dict[str, Syntax] = {
    "go": Syntax(
        names=frozenset(
            {"identifier", "type_identifier", "field_identifier", "package_identifier"}
        ),
        members={
            "selector_expression": ("operand", "field"),
            "qualified_type": ("package", "name"),
        },
        calls={"call_expression": "function", "composite_literal": "type"},
        typed=frozenset({"parameter_declaration", "var_spec", "field_declaration"}),
    ),
    "rust": Syntax(
        names=frozenset({"identifier", "type_identifier", "field_identifier"}),
        members={
            "field_expression": ("value", "field"),
            "scoped_identifier": ("path", "name"),
            "scoped_type_identifier": ("path", "name"),
        },
        calls={"call_expression": "function", "struct_expression": "name"},
        this=frozenset({"self"}),
        typed=frozenset({"parameter", "let_declaration"}),
    ),
    "java": Syntax(
        names=frozenset({"identifier", "type_identifier"}),
        members={"field_access": ("object", "field"), "scoped_type_identifier": ("", "")},
        calls={"method_invocation": "", "object_creation_expression": "type"},
        this=frozenset({"this", "super"}),
        typed=frozenset({"formal_parameter", "local_variable_declaration", "field_declaration"}),
        bases=frozenset({"superclass", "super_interfaces", "extends_interfaces"}),
    ),
    "c": Syntax(
        names=frozenset({"identifier", "type_identifier", "field_identifier"}),
        members={"field_expression": ("argument", "field")},
        calls={"call_expression": "function"},
        typed=frozenset({"parameter_declaration", "declaration", "field_declaration"}),
    ),
    "cpp": Syntax(
        names=frozenset(
            {"identifier", "type_identifier", "field_identifier", "namespace_identifier"}
        ),
        members={
            "field_expression": ("argument", "field"),
            "qualified_identifier": ("scope", "name"),
        },
        calls={"call_expression": "function", "new_expression": "type"},
        this=frozenset({"this"}),
        typed=frozenset({"parameter_declaration", "declaration", "field_declaration"}),
        bases=frozenset({"base_class_clause"}),
    ),
    "ruby": Syntax(
        names=frozenset({"identifier", "constant"}),
        members={"scope_resolution": ("scope", "name")},
        calls={"call": ""},
        this=frozenset({"self"}),
        bases=frozenset({"superclass"}),
    ),
}


def other_facts(
    language: str, root: Any, data: bytes, path: str, found: list[Found], index: PathIndex
) -> Facts:
    """The facts of the file at ``path`` in ``language`` (its tree ``root``, its
    definitions ``found``)."""
    walker = _Walker(language, data, path, found, index)
    walker.walk(root, "reference")
    return walker.facts


class _Walker:
    def __init__(
        self, language: str, data: bytes, path: str, found: list[Found], index: PathIndex
    ) -> None:
        self.language = language
        self.syntax = SYNTAX[language]
        self.data = data
        self.path = path
        self.index = index
        self.facts = empty(file_namespace(path, language))
        self.found = sorted(found, key=lambda f: (f.start_byte, -f.end_byte))
        self.starts = [f.start_byte for f in self.found]
        kinds = {f.name: f.kind for f in found}
        self.extra: dict[str, dict[str, Any]] = {}
        for f in found:
            extra = self.extra.setdefault(f.name, {})
            returns = returned_type(language, f)
            if returns:
                extra["returns"] = [[returns, f.line, 0]]
            self.facts["defs"].append([f.name, f.kind, f.line, f.end_line, extra])
        self.kinds = kinds

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def part(self, node: Any, name: str | None = None) -> list[Any]:
        return [
            self.text(node) if name is None else name,
            node.start_point[0] + 1,
            column_of(self.data, node),
        ]

    def owner(self, byte: int) -> str:
        """The innermost definition around ``byte`` (``""``: none)."""
        position = bisect.bisect_right(self.starts, byte)
        best = ""
        best_size = None
        for number in range(position - 1, -1, -1):
            entry = self.found[number]
            if entry.start_byte <= byte < entry.end_byte:
                size = entry.end_byte - entry.start_byte
                if best_size is None or size < best_size:
                    best, best_size = entry.name, size
            if number < position - 64:
                break
        return best

    def ref(self, node: Any, role: str, chain: Chain) -> None:
        if chain and any(p[0] not in ("()", "[]", "?") for p in chain):
            owner = self.owner(node.start_byte)
            self.facts["refs"].append([owner, owner, role, chain])

    def walk(self, node: Any, role: str) -> None:
        kind = node.type
        syntax = self.syntax
        if kind in syntax.skip or kind in _STRINGS:
            return
        if kind in (
            "import_declaration",
            "use_declaration",
            "package_clause",
            "package_declaration",
            "mod_item",
        ):
            self.imports(node)
            return
        if kind in syntax.bases:
            owner = self.owner(node.start_byte)
            bases = self.extra.setdefault(owner, {}).setdefault("bases", [])
            for child in node.named_children:
                for written in (
                    [child, *child.named_children]
                    if child.type in ("type_list", "interface_type_list")
                    else [child]
                ):
                    chain = self.plain(written)
                    if chain:
                        bases.append(chain)
                self.walk(child, "inherit")
            return
        if kind in syntax.typed:
            self.typed(node)
        if (
            kind in syntax.names
            or kind in syntax.members
            or kind in syntax.calls
            or (kind in syntax.this)
        ):
            chain = self.chain(node)
            if chain is not None:
                if is_definition_name(node):
                    return
                typed = role == "reference" and kind.startswith("type")
                self.ref(node, "type" if typed else role, chain)
                return
        if kind == "method_declaration" and self.language == "go":
            self.receiver(node)
        for child in node.named_children:
            self.walk(child, role)

    def chain(self, node: Any) -> Chain | None:
        kind = node.type
        syntax = self.syntax
        if kind in syntax.names or kind in syntax.this:
            return [self.part(node)]
        if kind in syntax.members:
            left, right = syntax.members[kind]
            if not left:  # Java's a.b.C type: its text
                pieces = self.text(node).split(".")
                return [[p, node.start_point[0] + 1, column_of(self.data, node)] for p in pieces]
            obj = node.child_by_field_name(left)
            member = node.child_by_field_name(right)
            if member is None:
                return None
            base = self.base(obj) if obj is not None else []
            return [*base, self.part(member)]
        if kind in syntax.calls:
            field = syntax.calls[kind]
            arguments = node.child_by_field_name("arguments") or node.child_by_field_name("body")
            if arguments is not None:
                for child in arguments.named_children if arguments.type != "block" else []:
                    self.walk(child, "reference")
            if field == "":  # Java's method_invocation, Ruby's call: object.name(...)
                obj = node.child_by_field_name("object") or node.child_by_field_name("receiver")
                name = node.child_by_field_name("name") or node.child_by_field_name("method")
                if name is None:
                    return None
                base = self.base(obj) if obj is not None else []
                block = node.child_by_field_name("block")
                if block is not None:
                    self.walk(block, "reference")
                return [*base, self.part(name), self.part(node, "()")]
            function = node.child_by_field_name(field)
            if function is None:
                return None
            if kind == "struct_expression" or kind == "composite_literal":
                body = node.child_by_field_name("body")
                if body is not None:
                    self.walk(body, "reference")
            return [*self.base(function), self.part(node, "()")]
        if kind in (
            "pointer_type",
            "reference_type",
            "generic_type",
            "parenthesized_expression",
            "pointer_expression",
            "unary_expression",
            "template_type",
        ) and (node.named_children):
            inner = node.named_children[0]
            for child in node.named_children[1:]:
                self.walk(child, "type")
            return self.chain(inner)
        return None

    def base(self, node: Any) -> Chain:
        found = self.chain(node)
        if found is None:
            self.walk(node, "reference")
            return [self.part(node, "?")]
        return found

    # -- names with types ------------------------------------------------------------------

    def typed(self, node: Any) -> None:
        """Give the names ``node`` declares the type it writes (or the value it is)."""
        scope = self.owner(node.start_byte)
        type_node = node.child_by_field_name("type")
        if self.language == "ruby":
            return
        chain = self.plain(type_node) if type_node is not None else None
        names: list[str] = []
        value = node.child_by_field_name("value")
        for field in ("name", "pattern", "declarator"):
            for child in node.children_by_field_name(field):
                names.extend(self.declared(child))
        if self.language == "go" and node.type == "var_spec" and not names:
            names = [self.text(c) for c in node.named_children if c.type == "identifier"]
        how = "annot" if chain else "local"
        if chain is None and value is not None:
            called = self.chain(value)
            if called and called[-1][0] == "()":
                how, chain = "new", called[:-1]
        for name in names:
            self.facts["vars"].append([scope, name, how, chain or []])

    def declared(self, node: Any) -> list[str]:
        if node.type in ("identifier", "field_identifier"):
            return [self.text(node)]
        if node.type in (
            "init_declarator",
            "pointer_declarator",
            "reference_declarator",
            "variable_declarator",
            "array_declarator",
        ):
            inner = node.child_by_field_name("declarator") or node.child_by_field_name("name")
            if inner is not None:
                return self.declared(inner)
            found = [c for c in node.named_children if c.type == "identifier"]
            return [self.text(found[0])] if found else []
        return []

    def plain(self, node: Any) -> Chain | None:
        chain = self.chain(node) if node is not None else None
        if chain and all(p[0] not in ("()", "[]", "?") for p in chain):
            return chain
        return None

    def receiver(self, node: Any) -> None:
        """A Go method's receiver: an instance of its type."""
        receiver = node.child_by_field_name("receiver")
        name = node.child_by_field_name("name")
        if receiver is None or name is None:
            return
        scope = self.owner(name.start_byte)
        for parameter in receiver.named_children:
            type_node = parameter.child_by_field_name("type")
            for child in parameter.children_by_field_name("name"):
                chain = self.plain(type_node)
                if chain:
                    self.facts["vars"].append([scope, self.text(child), "annot", chain])

    # -- imports ---------------------------------------------------------------------------

    def imports(self, node: Any) -> None:
        binds = self.facts["binds"]
        line = node.start_point[0] + 1
        if node.type == "package_declaration":  # Java: the namespace is the package
            for child in node.named_children:
                if child.type in ("scoped_identifier", "identifier"):
                    self.facts["ns"] = "java:" + self.text(child)
            return
        if node.type == "package_clause":
            return
        if self.language == "go":
            for spec in descendants(node, "import_spec"):
                path = spec.child_by_field_name("path")
                alias = spec.child_by_field_name("name")
                if path is None:
                    continue
                written = self.text(path).strip('"`')
                from cuedeck_code.imports import _go

                files = list(_go(spec, self.text(path), self.path, self.index))
                folder = posixpath.dirname(files[0]) if files else None
                local = self.text(alias) if alias is not None else written.rpartition("/")[2]
                binds.append(
                    ["", local, f"go:{folder}" if folder is not None else None, None, line, 0]
                )
            return
        if self.language == "java":
            text = self.text(node).removeprefix("import").strip().rstrip(";").strip()
            text = text.removeprefix("static ").strip()
            package, _, name = text.rpartition(".")
            if name == "*":
                binds.append(["", "*", f"java:{package}", None, line, 0])
            else:
                binds.append(["", name, f"java:{package}", name, line, 0])
            return
        if self.language == "rust" and node.type == "use_declaration":
            self.rust_use(node, line)

    def rust_use(self, node: Any, line: int) -> None:
        from cuedeck_code.imports import _rust

        text = self.text(node).removeprefix("pub").strip().removeprefix("use").strip()
        text = text.rstrip(";").strip()
        head, brace, rest = text.partition("{")
        items = [i.strip() for i in rest.rstrip("}").split(",")] if brace else [""]
        for item in items:
            if brace and (not item or "{" in item):
                continue
            whole = head + item if brace else head
            spec, _, alias = whole.partition(" as ")
            pieces = [p for p in spec.strip().split("::") if p]
            if not pieces or pieces[-1] == "*":
                continue
            target = list(_rust(node, whole, self.path, self.index))
            if not target and pieces[0] not in ("crate", "self", "super"):
                # `use store::Store` beside `mod store;`: a module of this one
                target = list(_rust(node, "self::" + whole, self.path, self.index))
            name = pieces[-1]
            local = alias.strip() or name
            if not target:
                continue
            module = target[0]
            stem = posixpath.splitext(posixpath.basename(module))[0]
            if stem == name or module.endswith(f"/{name}/mod.rs"):
                self.facts["binds"].append(["", local, module, None, line, 0])
            else:
                self.facts["binds"].append(["", local, module, name, line, 0])
