"""Serving a tool: validate, call, turn the reply into JSON, mask it.

One path for everything that hands a tool's reply to someone outside the process: the
MCP server, the board and the ``cue`` commands made from tools. Each caller refreshes
the workspace its own way first (MCP follows a file watcher, the board re-reads on every
call) and turns failures into its own shape; the reply itself is made here.

:func:`serve` also says which tools the caller can reach (a server's profile): the
tools about tools (``get_tool_categories``, ``whoami``...) read it with
:func:`offered_tools`, so they describe only what can be called.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from cuedeck.masking.session import MaskSession
    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace

#: The names of the tools the current caller can reach; None: every registered tool.
_OFFERED: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "cuedeck_offered_tools", default=None
)
#: The workspace and mask session of the reply being served (see :func:`request_masking`).
_REPLY: contextvars.ContextVar[tuple[Workspace, MaskSession] | None] = contextvars.ContextVar(
    "cuedeck_reply_masking", default=None
)


def strings_in(value: Any) -> list[str]:
    """Every distinct string in a JSON-like value, keys included, in the order a walk
    meets them (iteratively: any depth)."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found[node] = None
        elif isinstance(node, dict):
            # Most values of a request are strings: kept at once, not stacked.
            for key, item in node.items():
                if isinstance(key, str):
                    found[key] = None
                if isinstance(item, str):
                    found[item] = None
                elif isinstance(item, dict | list | tuple):
                    stack.append(item)
        elif isinstance(node, list | tuple):
            for item in node:
                if isinstance(item, str):
                    found[item] = None
                elif isinstance(item, dict | list | tuple):
                    stack.append(item)
    return list(found)


def masking_for(workspace: Workspace, inputs: Any = None) -> MaskSession:
    """A mask session for one reply that knows the secrets the request itself sent, so
    a reply or an error echoing them (even normalised) is masked too."""
    return learned(workspace.mask_session(), inputs)


def learned(session: MaskSession, inputs: Any) -> MaskSession:
    """``session``, having learned the secrets of every string in ``inputs`` it has not
    learned yet (each distinct string once: a batch repeats its keys and many values)."""
    session.learn_many(strings_in(inputs))
    return session


def request_masking(workspace: Workspace) -> MaskSession | None:
    """The mask session of the reply :func:`serve` is making on ``workspace``, or None.

    A tool that masks what the request sent before keeping it (memory's capture) masks
    with this session and learns as it goes (``MaskSession.mask_many(..., learn=True)``):
    the reply then knows those secrets without the request being scanned a second time.
    """
    serving = _REPLY.get()
    return serving[1] if serving is not None and serving[0] is workspace else None


def serve(
    tool: Tool,
    workspace: Workspace,
    arguments: Mapping[str, Any] | None = None,
    *,
    offered: Collection[str] | None = None,
) -> Any:
    """``tool``'s reply to ``arguments`` on ``workspace``, JSON-ready, every string masked.

    ``offered`` names the tools the caller can reach (None: all). Failures propagate as
    they are (a :class:`~cuedeck.errors.CueError` for a bad argument or a known cause).
    The reply's session learns the request's secrets once the tool is done: what the
    tool masked with it (:func:`request_masking`) is not scanned again.
    """
    token = _OFFERED.set(frozenset(offered) if offered is not None else None)
    try:
        return served(workspace, lambda: tool.call(workspace, arguments or {}), arguments)
    finally:
        _OFFERED.reset(token)


def served(workspace: Workspace, work: Callable[[], Any], inputs: Any = None) -> Any:
    """What ``work()`` returns, JSON-ready, every string masked by a session that knows
    the secrets of ``inputs`` (what the request sent): a tool's reply (:func:`serve`) or
    a service's answer handed to someone outside the process (the board)."""
    import pydantic_core

    session = workspace.mask_session()
    reply = _REPLY.set((workspace, session))
    try:
        value = work()
    finally:
        _REPLY.reset(reply)
    learned(session, inputs)
    # Values JSON has no type for (a date, a path) become their text, as anywhere else.
    plain = pydantic_core.to_jsonable_python(value, fallback=str)
    return session.mask_json(plain)


def offered_tools(tools: Mapping[str, Tool]) -> dict[str, Tool]:
    """``tools`` restricted to those the tool being served can reach (see :func:`serve`)."""
    offered = _OFFERED.get()
    return dict(tools) if offered is None else {n: t for n, t in tools.items() if n in offered}
