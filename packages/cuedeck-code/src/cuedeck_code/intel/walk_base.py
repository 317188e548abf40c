"""What the Python and script walkers share: the file's bytes and facts, and how a node
becomes text, a chain part, a reference or a variable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import empty

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex
    from cuedeck_code.intel.facts import Chain


#: Chain parts that name nothing: a call, an item, an expression not followed.
_NAMELESS = frozenset({"()", "[]", "?"})


class FactWalker:
    """A walker of one file's tree, collecting its facts (:mod:`.facts`)."""

    def __init__(self, data: bytes, path: str, index: PathIndex) -> None:
        self.data = data
        self.path = path
        self.index = index
        self.facts = empty(path)
        self.kinds: dict[str, str] = {"": "module"}

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def part(self, node: Any, name: str | None = None) -> list[Any]:
        """A chain part: the node's text (or ``name``), line and column."""
        row, column = node.start_point  # read once: each read makes a new tuple
        if name is None:
            name = self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
        return [name, row + 1, column]

    def ref(self, scope: str, owner: str, role: str, chain: Chain) -> None:
        """Record a reference, unless its chain names nothing (calls and items only)."""
        for part in chain:
            if part[0] not in _NAMELESS:
                self.facts["refs"].append([scope, owner, role, chain])
                return

    def var(self, scope: str, name: str, how: str, chain: Chain | None = None) -> None:
        self.facts["vars"].append([scope, name, how, chain or []])
