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
    from collections.abc import Collection, Iterator, Mapping

    from cuedeck.masking import MaskSession
    from cuedeck.tools import Tool
    from cuedeck.workspace import Workspace

#: The names of the tools the current caller can reach; None: every registered tool.
_OFFERED: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "cuedeck_offered_tools", default=None
)


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, keys included (iteratively: any depth)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)


def masking_for(workspace: Workspace, inputs: Any = None) -> MaskSession:
    """A mask session for one reply that knows the secrets the request itself sent, so
    a reply or an error echoing them (even normalised) is masked too."""
    session = workspace.mask_session()
    for text in strings_in(inputs):
        session.learn(text)
    return session


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
    """
    import pydantic_core

    session = masking_for(workspace, arguments)
    token = _OFFERED.set(frozenset(offered) if offered is not None else None)
    try:
        value = tool.call(workspace, arguments or {})
    finally:
        _OFFERED.reset(token)
    # Values JSON has no type for (a date, a path) become their text, as anywhere else.
    plain = pydantic_core.to_jsonable_python(value, fallback=str)
    return session.mask_json(plain)


def offered_tools(tools: Mapping[str, Tool]) -> dict[str, Tool]:
    """``tools`` restricted to those the tool being served can reach (see :func:`serve`)."""
    offered = _OFFERED.get()
    return dict(tools) if offered is None else {n: t for n, t in tools.items() if n in offered}
