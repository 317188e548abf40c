"""The MCP server's own tool: ``whoami``, the caller's role and what it may call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace


class WhoAmI(TypedDict):
    """The reply of ``whoami``."""

    name: str
    role: str
    transport: str
    workspace: str
    may_call: list[str]


def whoami(workspace: Workspace) -> WhoAmI:
    """Say who you are to this server: token name, role, workspace and the tools you may call.

    Roles: read < write < admin. Read-only tools need read, destructive ones admin, the
    rest write.
    """
    from cuedeck.serving import offered_tools
    from cuedeck_mcp.roles import CALLER, Caller, allows, required_role

    caller = CALLER.get() or Caller("python", "admin", "python", workspace.root.name)
    tools = offered_tools(workspace.plugins.tools())  # those this server serves
    return {
        "name": caller.name,
        "role": caller.role,
        "transport": caller.transport,
        "workspace": caller.workspace or workspace.root.name,
        "may_call": [
            name for name, tool in tools.items() if allows(caller.role, required_role(tool))
        ],
    }
