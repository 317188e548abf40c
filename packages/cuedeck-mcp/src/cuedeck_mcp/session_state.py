"""FastMCP with its session state store made when state is first written.

FastMCP reads each session's visibility rules from its state store before every
``tools/list`` and ``tools/call``. Making that store imports its key-value library
(with beartype): about a fifth of a second, which the first answer of every server
paid, though CueDeck never writes session state. Until something is written, every read
of an empty store answers None, which is what the store would answer; the first write,
or any other use, makes FastMCP's own store and hands everything to it from then on.
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP


class _StoreOnFirstWrite:
    """Answers reads with None while nothing was written; else FastMCP's own store."""

    def __init__(self, server: FastMCP) -> None:
        self._server = server
        self._real: Any = None

    @property
    def made(self) -> bool:
        """Whether FastMCP's store exists (something used more than a read)."""
        return self._real is not None

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        if self._real is None:
            return None  # an empty store has nothing under any key
        return await self._real.get(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # put, delete, ttl... : the real store
        if self._real is None:
            self._real = FastMCP._state_store.fget(self._server)  # type: ignore[attr-defined]
        return getattr(self._real, name)


class CueDeckFastMCP(FastMCP):
    """FastMCP whose state store is made on its first write (see the module)."""

    @property
    def _state_store(self) -> Any:
        store = self.__dict__.get("_cuedeck_state_store")
        if store is None:
            store = self.__dict__["_cuedeck_state_store"] = _StoreOnFirstWrite(self)
        return store
