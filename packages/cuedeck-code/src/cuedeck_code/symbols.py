"""Definitions out of a syntax tree: qualified names, kinds, signatures, docstrings.

The language's query marks each definition (``@definition.<kind>``) and its name
(``@name``). A definition's qualified name joins the names of the definitions around
it (``Client.send``); a Go method is qualified by its receiver's type, a C++ function
written ``Client::send`` by its scope, a JavaScript function assigned to a member by
that member (``res.send = function send()`` is ``res.send``, ``Foo.prototype.bar = ...``
the method ``Foo.bar``; ``this.``, ``exports.`` and ``module.exports.`` dropped, and
``module.exports = function app()`` named by the function). A function inside a
class-like definition is a ``method``. Lines run from the first decorator, ``export``
or ``template<>`` to the end of the body; the signature is the text before the body on
one line; the docstring is Python's first string, else the comment block right above.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from cuedeck_code.languages import Grammar, Language

#: Kinds whose functions are methods (and a Ruby module's too).
CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "type"})
SIGNATURE_LIMIT = 240
_SPACE = re.compile(r"\s+")
_GENERIC = re.compile(r"<.*>$", re.DOTALL)
_MEMBER = re.compile(r"[\w$#]+")


@attrs.frozen
class Found:
    """A definition found in the tree, before hashes and tokens are added."""

    name: str
    kind: str
    start_byte: int
    end_byte: int
    line: int
    end_line: int
    signature: str
    docstring: str
    depth: int


def definitions(grammar: Grammar, matches: list[Any], data: bytes) -> list[Found]:
    """Every definition among the query's ``matches`` (``(pattern, captures)`` pairs of
    one run over the tree), in file order (outer before inner)."""
    language = grammar.language
    seen: dict[int, tuple[int, Any, Any, str]] = {}  # node id -> (pattern, node, name, kind)
    receivers: dict[int, Any] = {}
    for pattern, captures in matches:
        kind = next((c.partition(".")[2] for c in captures if c.startswith("definition.")), None)
        if kind is None:
            continue
        node = captures[f"definition.{kind}"][0]
        names = captures.get("name")
        if node.id in seen and seen[node.id][0] <= pattern:
            continue  # a more specific pattern (listed first) matched it already
        seen[node.id] = (pattern, node, names[0] if names else None, kind)
        if "receiver" in captures:
            receivers[node.id] = captures["receiver"][0]

    nodes = {node_id: entry for node_id, entry in seen.items()}
    found: list[Found] = []
    for node_id, (_, node, name_node, kind) in nodes.items():
        name = _name(language, node, name_node, data)
        if not name:
            continue
        outer = _enclosing(node, nodes)
        scope = [_name(language, o[1], o[2], data) for o in outer]
        if node_id in receivers:  # a Go method: Type.Method
            scope.append(_text(receivers[node_id], data))
        scope = [s for s in scope if s]
        scoped = "." in name  # C++ Client::send written outside its class
        if scoped:
            *parts, name = name.split(".")
            scope.extend(parts)
        containers = CONTAINERS | {"module"} if language.name == "ruby" else CONTAINERS
        inside = bool(outer) and outer[-1][3] in containers
        # A function assigned to a prototype's member is a method of what it names.
        assigned_method = kind == "method" and node.type == "assignment_expression"
        member = node_id in receivers or inside or assigned_method
        if kind == "function" and scoped and not member and language.name == "cpp":
            kind = "scoped"  # a method when its scope is a class of this file (see below)
        elif kind == "function" and member:
            kind = "method"
        elif kind == "method" and not member:
            kind = "function"
        start = _outermost(node, language)
        found.append(
            Found(
                name=".".join([*scope, name]),
                kind=kind,
                start_byte=start.start_byte,
                end_byte=node.end_byte,
                line=start.start_point[0] + 1,
                end_line=_end_line(node),
                signature=_signature(node, data),
                docstring=_docstring(language, node, start, data),
                depth=len(outer),
            )
        )
    classes = {f.name for f in found if f.kind in CONTAINERS}
    found = [
        attrs.evolve(f, kind="method" if f.name.rpartition(".")[0] in classes else "function")
        if f.kind == "scoped"
        else f
        for f in found
    ]
    found.sort(key=lambda f: (f.line, f.depth, -f.end_line))
    return found


def _enclosing(node: Any, nodes: dict[int, tuple[int, Any, Any, str]]) -> list[Any]:
    """The definitions around ``node``, outermost first."""
    outer = []
    parent = node.parent
    while parent is not None:
        entry = nodes.get(parent.id)
        if entry is not None:
            outer.append(entry)
        parent = parent.parent
    return outer[::-1]


def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _name(language: Language, node: Any, name_node: Any, data: bytes) -> str:
    """The name a definition is known by (generics and ``::`` scopes made plain)."""
    if name_node is None:
        name_node = _declarator_name(node)
        if name_node is None:
            return ""
    if node.type == "assignment_expression":
        return _assigned_name(node, name_node, data)
    name = _text(name_node, data).strip()
    if language.name in ("c", "cpp", "rust", "ruby"):
        name = name.replace("::", ".")
    name = _GENERIC.sub("", name) if "<" in name else name
    name = name.strip("'\"`")
    return _SPACE.sub(" ", name)


def _assigned_name(node: Any, member: Any, data: bytes) -> str:
    """The name of a function or class assigned to ``member`` (``res.send``, ``Foo.bar``
    for ``Foo.prototype.bar``), or ``""`` when the member is not a plain dotted name."""
    parts = _text(member, data).split(".")
    if parts[0] == "this":
        parts = parts[1:]
    if parts[:2] == ["module", "exports"]:
        parts = parts[2:]
    elif parts[:1] == ["exports"]:
        parts = parts[1:]
    parts = [part.strip() for part in parts if part.strip() != "prototype"]
    if not parts:  # module.exports = function app() {...}: the function's own name
        own = node.child_by_field_name("right").child_by_field_name("name")
        return _text(own, data) if own is not None else ""
    return ".".join(parts) if all(_MEMBER.fullmatch(part) for part in parts) else ""


def _declarator_name(node: Any) -> Any:
    """A C/C++ function's name node: down its declarator to the identifier."""
    current = node.child_by_field_name("declarator")
    while current is not None:
        if current.type in (
            "identifier",
            "field_identifier",
            "qualified_identifier",
            "destructor_name",
            "operator_name",
            "template_function",
        ):
            return current
        nxt = current.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in current.named_children if "declarator" in c.type), None)
        current = nxt
    return None


def _outermost(node: Any, language: Language) -> Any:
    """``node`` or the wrapper around it that belongs to it (decorators, export...)."""
    while (
        node.parent is not None
        and node.parent.type in language.wrappers
        and sum(1 for c in node.parent.named_children if c.type == node.type) == 1
    ):
        node = node.parent
    return node


def _end_line(node: Any) -> int:
    """The last line of ``node`` (a node ending at column 0 ends on the line before)."""
    row, column = node.end_point
    return int(row + 1 if column > 0 or row == node.start_point[0] else row)


def _signature(node: Any, data: bytes) -> str:
    """The definition up to its body, on one line (its first line when it has no body)."""
    body = node.child_by_field_name("body")
    value = node.child_by_field_name("right")  # a function assigned to a member
    if body is None and value is not None:
        body = value.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        text = data[node.start_byte : body.start_byte].decode("utf-8", errors="replace")
    else:
        text = _text(node, data).split("\n", 1)[0]
    # A comment between the header and the body (Ruby's doc of a first member) is not
    # part of the signature.
    kept = [line for line in text.split("\n") if not line.strip().startswith(("#", "//"))]
    text = _SPACE.sub(" ", " ".join(kept)).strip().rstrip("{:").strip()
    if len(text) > SIGNATURE_LIMIT:
        text = text[: SIGNATURE_LIMIT - 1] + "…"
    return text


def _docstring(language: Language, node: Any, start: Any, data: bytes) -> str:
    """Python's docstring, else the comments right above the definition."""
    if language.name == "python":
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement":
            string = first.named_children[0] if first.named_children else None
            if string is not None and string.type == "string":
                return _clean_string(_text(string, data))
        return ""
    comments = []
    sibling = start.prev_named_sibling
    line = start.start_point[0]
    while sibling is not None and sibling.type in language.comment:
        if sibling.end_point[0] < line - 1:
            break
        comments.append(_text(sibling, data))
        line = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    return _clean_comment("\n".join(reversed(comments)))


def _clean_string(text: str) -> str:
    """A Python string literal's text, prefix and quotes off, unindented."""
    stripped = text.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if (
            stripped.startswith(quote)
            and stripped.endswith(quote)
            and len(stripped) >= 2 * len(quote)
        ):
            stripped = stripped[len(quote) : -len(quote)]
            break
    return _dedent(stripped)


def _clean_comment(text: str) -> str:
    """Comment text without its markers (``//``, ``#``, ``/* */``, leading ``*``)."""
    lines = []
    for raw in text.split("\n"):
        line = raw.strip()
        for marker in ("/**", "/*!", "/*", "*/", "///", "//!", "//", "#"):
            if line.startswith(marker):
                line = line[len(marker) :]
                break
        if line.endswith("*/"):
            line = line[:-2]
        line = line.strip()
        if line.startswith("* ") or line == "*":
            line = line[1:].strip()
        lines.append(line)
    return "\n".join(lines).strip()


def _dedent(text: str) -> str:
    """Docstring indentation removed (the first line is never indented)."""
    lines = text.expandtabs().split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    margin = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    cleaned = [lines[0].strip(), *(line[margin:].rstrip() for line in lines[1:])]
    return "\n".join(cleaned).strip()
