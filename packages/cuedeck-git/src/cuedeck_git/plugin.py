"""The CueDeck plugin of cuedeck-git (entry point ``cuedeck = git``): the git tools.

Tools only, no CLI commands: people have git; these are for agents without a shell.
Kept import-light: the tool modules load when the tools are registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    from cuedeck_git import branches, changes, destructive, history, remote, status

    for reader in (status.git_status, history.git_diff, history.git_log, branches.git_branch_list):
        register(reader, category="git", read_only=True, idempotent=True)
    register(changes.git_stage, category="git", idempotent=True)
    register(changes.git_unstage, category="git", idempotent=True)
    register(changes.git_commit, category="git")
    register(remote.git_fetch, category="git", idempotent=True)
    register(remote.git_pull, category="git")
    register(remote.git_push, category="git")
    register(branches.git_branch_create, category="git")
    register(branches.git_branch_switch, category="git", idempotent=True)
    register(changes.git_merge_abort, category="git")
    register(destructive.git_reset, category="git", destructive=True)
    register(destructive.git_clean, category="git", destructive=True)
    register(destructive.git_checkout_file, category="git", destructive=True)
    register(branches.git_branch_delete, category="git", destructive=True)
