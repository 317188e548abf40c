"""What the Python and script walkers share: the file's bytes and facts, and how a node
becomes text, a chain part, a reference or a variable."""

from __future__ import annotations

import contextlib
import gc
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import THIS, empty

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cuedeck_code.imports import PathIndex
    from cuedeck_code.intel.facts import Chain


#: Chain parts that name nothing: a call, an item, an expression not followed.
_NAMELESS = frozenset({"()", "[]", "?"})


def column_of(data: bytes, node: Any) -> int:
    """The column where ``node`` starts, in UTF-16 code units as SCIP indexes and
    editors count them (tree-sitter counts bytes: the same on an ASCII line)."""
    column = int(node.start_point[1])
    if not column:
        return 0
    start = node.start_byte
    prefix = data[start - column : start]
    if prefix.isascii():
        return column
    return len(prefix.decode("utf-8", errors="replace").encode("utf-16-le")) // 2


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: a file's walk or resolution makes tens of
    thousands of lists and tuples, none in a cycle, and each collection the allocations
    would set off walks every object the process holds (all the files' facts in a cold
    build); more than half of a walk's time went to it. It runs once after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class FactWalker:
    """A walker of one file's tree, collecting its facts (:mod:`.facts`)."""

    #: The names of a method's receiver (its instance, or its class) in the language.
    receivers: frozenset[str] = THIS

    def __init__(self, data: bytes, path: str, index: PathIndex) -> None:
        self.data = data
        #: Whether every column in bytes is one in code units too.
        self.ascii = data.isascii()
        self.path = path
        self.index = index
        self.facts = empty(path)
        self.kinds: dict[str, str] = {"": "module"}
        #: Anonymous functions met so far directly in each scope (their scopes' names).
        self.anonymous: dict[str, int] = {}
        #: What each function's ``return`` statements give (None: no chain), by scope.
        self.returned: dict[str, list[Chain | None]] = {}

    def anonymous_scope(self, scope: str) -> str:
        """The scope of the next anonymous function (a lambda, an arrow) directly in
        ``scope``: ``<N>`` below it, N counting from 1, so that its parameters hide the
        names around it there and only there."""
        count = self.anonymous[scope] = self.anonymous.get(scope, 0) + 1
        return f"{scope}.<{count}>" if scope else f"<{count}>"

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def part(self, node: Any, name: str | None = None) -> list[Any]:
        """A chain part: the node's text (or ``name``), line and column."""
        row, column = node.start_point  # read once: each read makes a new tuple
        if name is None:
            name = self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
        if column and not self.ascii:
            column = column_of(self.data, node)
        return [name, row + 1, column]

    def column(self, node: Any) -> int:
        """Where ``node`` starts on its line (:func:`column_of`)."""
        return int(node.start_point[1]) if self.ascii else column_of(self.data, node)

    def ref(self, scope: str, owner: str, role: str, chain: Chain) -> None:
        """Record a reference, unless its chain names nothing (calls and items only)."""
        for part in chain:
            if part[0] not in _NAMELESS:
                self.facts["refs"].append([scope, owner, role, chain])
                return

    def returns(self, scope: str, chain: Chain | None) -> None:
        """A ``return`` in the function ``scope`` gives ``chain``."""
        self.returned.setdefault(scope, []).append(chain)

    def gives(self, qual: str, flags: dict[str, Any]) -> None:
        """Without a written return type, what the function ``qual`` returns when all
        its ``return`` statements that name something name the same chain, not one of
        its own locals (``return new Foo()``, ``return self._copy()``): ``gives``."""
        found = {
            tuple(part[0] for part in chain): chain
            for chain in self.returned.pop(qual, ())
            if chain and all(part[0] not in ("[]", "?") for part in chain)
        }
        if "returns" in flags or len(found) != 1:
            return
        chain = next(iter(found.values()))
        head = chain[0][0]
        if head not in self.receivers and any(
            v[0] == qual and v[1] == head for v in self.facts["vars"]
        ):
            return
        flags["gives"] = chain

    def var(self, scope: str, name: str, how: str, chain: Chain | None = None) -> None:
        self.facts["vars"].append([scope, name, how, chain or []])
