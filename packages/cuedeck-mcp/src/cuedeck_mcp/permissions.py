"""Permissions: what each role may do, named as the code-indexer specification names them.

CueDeck's three roles are the specification's three: ``read`` is its ``normal_user``,
``write`` its ``power_user``, ``admin`` its ``admin``. A tool needs one permission; a
role grants a set. Every refusal names the permission it needed (error 1012 with
``permission``, or 1401 for a writing tool aimed at a read-only repository).

===========================  ===================================================  ======
permission                   what it allows                                       role
===========================  ===================================================  ======
``query_repos``              read-only tools: search, read, scenes, history        read
``repository:write``         tools that change files, cards, memory, git state     write
                             (in a workspace or an activation, never a shared
                             repository or a composite)
``activate_repos``           activate, deactivate and sync your own working        write
                             copies, manage your composites
``destructive_operations``   tools that destroy work (delete_file, git_reset,      admin
                             git_clean, ...), each still asking for confirmation
``manage_golden_repos``      register, refresh and remove shared repositories      admin
``manage_users``             see the team's members (list_users)                   admin
===========================  ===================================================  ======
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuedeck.tools import Tool
    from cuedeck_mcp.roles import Role

#: Each permission and the least role that has it.
PERMISSIONS: dict[str, Role] = {
    "query_repos": "read",
    "repository:write": "write",
    "activate_repos": "write",
    "destructive_operations": "admin",
    "manage_golden_repos": "admin",
    "manage_users": "admin",
}

#: The specification's name for each role.
SPEC_ROLES: dict[Role, str] = {"read": "normal_user", "write": "power_user", "admin": "admin"}

#: Tools whose permission their flags do not say: the team's own tools. (Deactivating a
#: working copy destroys it, but it is yours: activate_repos, not an admin's permission.)
TOOL_PERMISSIONS = {
    "add_golden_repo": "manage_golden_repos",
    "refresh_golden_repo": "manage_golden_repos",
    "remove_golden_repo": "manage_golden_repos",
    "activate_repository": "activate_repos",
    "deactivate_repository": "activate_repos",
    "sync_repository": "activate_repos",
    "manage_composite_repository": "activate_repos",
    "list_users": "manage_users",
}


def permission_of(tool: Tool) -> str:
    """The permission ``tool`` needs: its entry in :data:`TOOL_PERMISSIONS`, else by its
    flags (read-only, destructive, or writing)."""
    named = TOOL_PERMISSIONS.get(tool.name)
    if named is not None:
        return named
    if tool.read_only:
        return "query_repos"
    return "destructive_operations" if tool.destructive else "repository:write"


def permissions_of(role: Role) -> list[str]:
    """Every permission ``role`` has, in the table's order."""
    from cuedeck_mcp.roles import allows

    return [name for name, needed in PERMISSIONS.items() if allows(role, needed)]
