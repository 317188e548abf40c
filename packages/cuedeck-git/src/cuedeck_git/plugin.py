"""The CueDeck plugin of cuedeck-git (entry point ``cuedeck = git``): the git tools, their
``[git]`` config section, and the ``git`` baseline of scenes (``since`` a commit, branch
or tag).

Tools only, no CLI commands: people have git; these are for agents without a shell.
Kept import-light: the tools are registered by import path, so their modules load when
a tool is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed, RegisterTool
    from cuedeck.models import Baseline
    from cuedeck.workspace import Workspace


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_git.settings import GitSettings

    register("git", GitSettings)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    readers = (
        "cuedeck_git.status:git_status",
        "cuedeck_git.history:git_diff",
        "cuedeck_git.history:git_log",
        "cuedeck_git.branches:git_branch_list",
        "cuedeck_git.blame:git_blame",
        "cuedeck_git.blame:git_file_history",
        "cuedeck_git.pickaxe:git_search_commits",
        "cuedeck_git.pickaxe:git_search_diffs",
    )
    for reader in readers:
        register(reader, category="git", read_only=True, idempotent=True)
    # writes: a call on files another agent's claim holds (no paths: every file) is
    # refused unless forced.
    paths = "file_paths"
    register("cuedeck_git.commits:git_stage", category="git", idempotent=True, writes=paths)
    register("cuedeck_git.commits:git_unstage", category="git", idempotent=True, writes=paths)
    register("cuedeck_git.commits:git_commit", category="git")
    register("cuedeck_git.remote:git_fetch", category="git", idempotent=True)
    register("cuedeck_git.remote:git_pull", category="git")
    register("cuedeck_git.remote:git_push", category="git")
    register("cuedeck_git.branches:git_branch_create", category="git")
    register("cuedeck_git.branches:git_branch_switch", category="git", idempotent=True)
    register("cuedeck_git.commits:git_merge_abort", category="git")
    register("cuedeck_git.destructive:git_reset", category="git", destructive=True)
    register("cuedeck_git.destructive:git_clean", category="git", destructive=True, writes=paths)
    register(
        "cuedeck_git.destructive:git_checkout_file",
        category="git",
        destructive=True,
        writes="file_path",
    )
    register("cuedeck_git.branches:git_branch_delete", category="git", destructive=True)


@hookimpl
def resolve_baseline(workspace: Workspace, since: str) -> Baseline | None:
    # `cue scene --since HEAD~3`: any commit, branch or tag.
    from cuedeck_git.baseline import git_baseline

    return git_baseline(workspace, since)
