"""What the Python and script walkers share: the file's bytes and facts, and how a node
becomes text, a chain part, a reference or a variable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import empty

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex
    from cuedeck_code.intel.facts import Chain


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
        return [
            self.text(node) if name is None else name,
            node.start_point[0] + 1,
            node.start_point[1],
        ]

    def ref(self, scope: str, owner: str, role: str, chain: Chain) -> None:
        """Record a reference, unless its chain names nothing (calls and items only)."""
        if chain and any(p[0] not in ("()", "[]", "?") for p in chain):
            self.facts["refs"].append([scope, owner, role, chain])

    def var(self, scope: str, name: str, how: str, chain: Chain | None = None) -> None:
        self.facts["vars"].append([scope, name, how, chain or []])
