"""What a Go, Rust, Java, C, C++ or Ruby definition's syntax says beyond its name (see
:mod:`.walk_other`): the type a function returns, read from its signature, and the
helpers the walk uses to find names in a tree."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuedeck_code.symbols import Found


_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_TYPES = frozenset(
    {
        "pub",
        "fn",
        "func",
        "static",
        "public",
        "private",
        "protected",
        "final",
        "const",
        "unsafe",
        "async",
        "virtual",
        "inline",
        "mut",
        "void",
        "int",
        "bool",
        "float",
        "double",
        "char",
        "long",
        "self",
        "impl",
        "dyn",
        "error",
        "string",
        "String",
        "Result",
        "Option",
        "Box",
        "Vec",
        "def",
    }
)


def returned_type(language: str, found: Found) -> str | None:
    """The type a function returns, from its signature: ``-> Store`` (Rust, with
    ``Self`` as its impl's type), what follows the parameters in Go (``*Store``), the
    type before the name in Java and C++."""
    if found.kind not in ("function", "method"):
        return None
    signature = found.signature
    short = found.name.rpartition(".")[2]
    if language == "rust":
        if "->" not in signature:
            return None
        written = signature.rsplit("->", 1)[1]
    elif language == "go":
        close = closing(signature, signature.find(short + "("))
        written = signature[close + 1 :] if close > 0 else ""
    elif language in ("java", "cpp"):
        written = signature.split(short + "(", 1)[0]
        words: list[str] = _TYPE_NAME.findall(written)
        return words[-1] if words and words[-1] not in _NOT_TYPES else None
    else:
        return None
    for word in _TYPE_NAME.findall(written):
        if word == "Self":
            return found.name.rpartition(".")[0].rpartition(".")[2] or None
        if word not in _NOT_TYPES:
            return str(word)
    return None


def closing(text: str, start: int) -> int:
    """The index of the parenthesis closing the one at or after ``start``."""
    if start < 0:
        return -1
    depth = 0
    for position in range(text.find("(", start), len(text)):
        if text[position] == "(":
            depth += 1
        elif text[position] == ")":
            depth -= 1
            if depth == 0:
                return position
    return -1


def descendants(node: Any, kind: str) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            found.append(current)
        else:
            stack.extend(current.named_children)
    return found


def is_definition_name(node: Any) -> bool:
    """Whether ``node`` is the name a definition is written with (not a reference)."""
    parent = node.parent
    if parent is None:
        return False
    named = parent.child_by_field_name("name")
    if (
        named is not None
        and named.id == node.id
        and parent.type.endswith(
            (
                "declaration",
                "definition",
                "item",
                "spec",
                "declarator",
                "method",
                "class",
                "module",
                "specifier",
            )
        )
    ):
        return True
    declarator = parent.child_by_field_name("declarator")
    return bool(
        declarator is not None
        and declarator.id == node.id
        and parent.type in ("function_declarator",)
    )
