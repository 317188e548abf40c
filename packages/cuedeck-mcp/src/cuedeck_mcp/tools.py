"""The MCP server's own tools: ``whoami`` (the caller's role, permissions and what it may
call) and ``cidx_quick_reference`` (the served tools at a glance, for clients written
against the code-indexer specification)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


class WhoAmI(TypedDict):
    """The reply of ``whoami``."""

    name: str
    role: str
    spec_role: str
    permissions: list[str]
    transport: str
    workspace: str
    may_call: list[str]


def whoami(workspace: Workspace) -> WhoAmI:
    """Say who you are to this server: token name, role, permissions and what you may call.

    Roles: read < write < admin (the specification's normal_user, power_user, admin).
    Read-only tools need read, destructive ones admin, the rest write.
    """
    from cuedeck.serving.calls import offered_tools
    from cuedeck_mcp.roles import (
        CALLER,
        SPEC_ROLES,
        Caller,
        allows,
        permissions_of,
        required_role,
    )

    caller = CALLER.get() or Caller("python", "admin", "python", workspace.root.name)
    tools = offered_tools(workspace.plugins.tools())  # those this server serves
    return {
        "name": caller.name,
        "role": caller.role,
        "spec_role": SPEC_ROLES[caller.role],
        "permissions": permissions_of(caller.role),
        "transport": caller.transport,
        "workspace": caller.workspace or workspace.root.name,
        "may_call": [
            name for name, tool in tools.items() if allows(caller.role, required_role(tool))
        ],
    }


class QuickTool(TypedDict):
    """One tool in the quick reference."""

    name: str
    category: str
    summary: str
    permission: str
    writes: bool


class QuickReference(TypedDict):
    """What ``cidx_quick_reference`` returns."""

    role: str
    spec_role: str
    repository_alias: str
    tools: list[QuickTool]
    total_tools: int


def cidx_quick_reference(
    workspace: Workspace,
    category: Annotated[
        str | None, pydantic.Field(description="Only this category's tools", max_length=40)
    ] = None,
) -> QuickReference:
    """The quick reference of the tools served to you: summary, category and permission.

    Each entry also says whether the tool writes; ``category`` narrows the list.
    """
    from cuedeck.serving.calls import offered_tools
    from cuedeck_mcp.roles import (
        CALLER,
        SPEC_ROLES,
        Caller,
        allows,
        permission_of,
        required_role,
    )

    caller = CALLER.get() or Caller("python", "admin", "python", workspace.root.name)
    offered = offered_tools(workspace.plugins.checked_tools())  # those this server serves
    tools = {
        name: tool
        for name, tool in offered.items()
        if allows(caller.role, required_role(tool))
        and (category is None or tool.category == category)
    }
    team = any(tool.category == "repositories" for tool in offered.values())
    rules = (
        "Every search, file and git tool takes repository_alias: a shared repository "
        "(name-global, read-only: list_global_repos) or one of your activated repositories "
        "or composites (list_activated_repos); activate_repository makes a writable copy."
        if team
        else f"This server serves one repository ({caller.workspace or workspace.root.name}): "
        "repository_alias may be left out."
    )
    return {
        "role": caller.role,
        "spec_role": SPEC_ROLES[caller.role],
        "repository_alias": rules,
        "tools": [
            {
                "name": name,
                "category": tool.category,
                "summary": tool.summary,
                "permission": permission_of(tool),
                "writes": not tool.read_only,
            }
            for name, tool in tools.items()
        ],
        "total_tools": len(tools),
    }
