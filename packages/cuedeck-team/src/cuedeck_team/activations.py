"""Activations: a user's own working copy of a shared repository, on a branch.

An activation is a local ``git clone`` of the shared repository, not a ``git worktree``
of it: a worktree keeps its branches, index and commits in the shared repository's
``.git`` (so one user's commit or branch deletion would write the shared repository,
and two users could not check out one branch), while a local clone hard-links the
object files (no bytes copied) and has refs, config and index of its own. Its
``origin`` is the shared repository's source, so pushes and ``sync_repository`` go to
the real remote. Its index starts as a copy of the shared one: only files that differ
on its branch are parsed, and vectors come from the server's embedding cache.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck.layout import CACHE_DIR
from cuedeck.progress import report
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import gitops
from cuedeck_team.disk import footprint, remove_tree, seed_cache
from cuedeck_team.errors import NoRemote, WrongRepositoryKind
from cuedeck_team.home import index_workspace, prepare_workspace
from cuedeck_team.nodecache import ensure
from cuedeck_team.registry import check_alias, is_global
from cuedeck_team.shared import find as find_shared

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck_team.home import Team
    from cuedeck_team.registry import Activation, Kind


def find(team: Team, owner: str, alias: str, *, what: str = "activated") -> Activation:
    """``owner``'s ready activation or composite ``alias``; 1403 for a shared alias, 1400
    for an unknown one."""
    from cuedeck.errors import did_you_mean, suggestion_text

    if is_global(alias):
        raise WrongRepositoryKind(
            f"Repository '{alias}' is a global repository",
            repository_alias=alias,
            help="only your activated repositories can be changed this way; shared "
            "repositories are managed by admins (refresh_golden_repo, remove_golden_repo)",
        )
    found = team.registry.find_activation(owner, alias)
    if found is None or found.state != "ready":
        known = [record.alias for record in team.registry.activations(owner)]
        matches = did_you_mean(alias, known)
        raise UnknownRepository(
            f"Repository '{alias}' is not {what}",
            repository_alias=alias,
            suggestion=suggestion_text(matches),
            candidates=matches or known[:10],
            help="list_activated_repos lists your activated repositories",
        )
    return found


def check_user_alias(alias: str) -> str:
    """``alias`` if a user may name a working copy so (not ``-global``)."""
    check_alias(alias, field="user_alias")
    if is_global(alias):
        raise InvalidInput(
            f"{alias!r} ends in -global, which names shared repositories only",
            field="user_alias",
            help="pick a name of your own, e.g. my-" + alias.removesuffix("-global"),
        )
    return alias


def activate(
    team: Team, owner: str, golden: str, alias: str | None, branch: str | None
) -> dict[str, Any]:
    """Make ``owner``'s working copy of the shared repository ``golden`` on ``branch``
    (default: the shared repository's), named ``alias`` (default: golden's name)."""
    shared = find_shared(team, golden)
    name = check_user_alias(alias or shared.alias.removesuffix("-global"))
    wanted = branch or shared.branch
    from cuedeck_git.refs import check_ref_name

    check_ref_name(wanted, field="branch_name")
    source = ensure(team, shared)  # this node's clone at the registered head
    with making(team, owner, name, "activation", shared.alias, wanted) as (_record, folder):
        report(0, 3, "Activating a repository")
        checkout(source, folder, wanted)
        report(1, 3, "Activating a repository")
        prepare_workspace(folder, config_from=source)
        seeded = seed_cache(source, folder)
        with team.open(folder) as workspace:
            indexed = index_workspace(workspace, embed=False)
        report(3, 3, "Activating a repository")
    return {
        "success": True,
        "repository_alias": name,
        "golden_repo_alias": shared.alias,
        "branch": wanted,
        "head": gitops.head(folder),
        "seeded_from_shared": bool(seeded),
        **indexed,
    }


@contextlib.contextmanager
def making(
    team: Team, owner: str, name: str, kind: Kind, golden: str, branch: str
) -> Iterator[tuple[Activation, Path]]:
    """Claim ``owner``'s ``name`` and an empty folder for a working copy the block makes:
    ready when the block ends, removed (folder and record) if it fails."""
    with team.changing(f"user-{owner}-{name}", name):
        team.clear_unfinished_activation(owner, name)
        record = team.registry.begin_activation(owner, name, kind, golden, branch, name)
        folder = team.user_path(record)
        try:
            remove_tree(folder)
            yield record, folder
            team.registry.update_activation(owner, name, state="ready")
        except BaseException:
            remove_tree(folder)
            team.registry.drop_activation(owner, name)
            raise


def checkout(source: Path, folder: Path, branch: str) -> None:
    """A local clone of the shared repository at ``source`` into ``folder``, with every
    branch its source has as ``origin/*``, ``origin`` pointing at that source, and
    ``branch`` checked out tracking ``origin/<branch>``."""
    # Hard links when both are on one file system, a copy otherwise (a node's cache and
    # the mounted home): git's own choice for a local path.
    gitops.clone(str(source), folder, checkout=False)
    gitops.git(
        folder,
        "fetch", "--quiet", "--no-tags", str(source),
        "+refs/remotes/origin/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*",
    )  # fmt: skip
    upstream = gitops.remote_url(source)
    if upstream:
        gitops.git(folder, "remote", "set-url", "origin", upstream)
    else:  # a shared repository without a source to push to: keep it local
        gitops.git(folder, "remote", "remove", "origin")
    branches = gitops.refs(folder, "refs/remotes/origin/")
    if f"refs/remotes/origin/{branch}" not in branches:
        shown = sorted(ref.removeprefix("refs/remotes/origin/") for ref in branches)
        raise InvalidInput(
            f"the shared repository has no branch {branch!r}",
            field="branch_name",
            candidates=shown[:20],
            help="activate one of its branches, then create yours with git_branch_create",
        )
    gitops.git(folder, "checkout", "--quiet", "-B", branch, "--track", f"origin/{branch}")


def describe(team: Team, record: Activation) -> dict[str, Any]:
    """What ``list_activated_repos`` says of one activation or composite."""
    folder = team.user_path(record)
    entry: dict[str, Any] = {
        "alias": record.alias,
        "kind": record.kind,
        "created_at": record.created,
    }
    if record.kind == "activation":
        entry["golden_repo_alias"] = record.golden
        entry["branch"] = gitops.current_branch(folder) or record.branch
        entry["head"] = gitops.head(folder)
    else:
        entry["components"] = [
            c.golden for c in team.registry.components(record.owner, record.alias)
        ]
    return entry


def deactivate(team: Team, owner: str, alias: str) -> dict[str, Any]:
    """Delete ``owner``'s activation or composite ``alias``: its working copy and its
    indexes. What is reported freed is what only it held (objects it shares with the
    shared repository through hard links stay)."""
    record = find(team, owner, alias)
    folder = team.user_path(record)
    with team.changing(f"user-{owner}-{alias}", alias):
        team.registry.update_activation(owner, alias, state="removing")
        indexes = index_files(folder)
        size = footprint(folder)
        team.removing(record.generation)
        remove_tree(folder)
        team.registry.drop_activation(owner, alias)
    return {
        "success": True,
        "repository_alias": alias,
        "indexes_deleted": indexes,
        "space_freed_mb": round(size.own / 2**20, 2),
        "space_freed_bytes": size.own,
        "shared_bytes_kept": size.shared,
    }


def index_files(folder: Path) -> list[str]:
    """The index files of the workspace at ``folder`` and of every workspace inside it
    (a composite's components), relative to ``folder``."""
    found = []
    for cache in sorted(folder.rglob(CACHE_DIR)):
        if ".git" in cache.relative_to(folder).parts:
            continue
        for entry in sorted(cache.iterdir()):
            if entry.is_file() and not entry.name.endswith((".lock", ".pid", ".json")):
                found.append(entry.relative_to(folder).as_posix())
    return found


def unsaved_work(team: Team, record: Activation) -> list[str]:
    """What deleting the working copy would lose: changed or new files, and commits on
    no remote branch; for a composite, its own cards and memory. Empty when nothing."""
    folder = team.user_path(record)
    if record.kind != "activation":
        from cuedeck.layout import CARDS_DIR, CORE_PLACES
        from cuedeck.plugins.host import get_places, make_plugin_host

        cards = sorted((folder / CARDS_DIR).glob("*.md"))
        lost = [f"card: {path.name}" for path in cards]
        # What plugins keep there and git ignores (memory, for one) is one person's work.
        for line in get_places(make_plugin_host()).gitignore:
            place = folder / line.rstrip("/")
            if line in CORE_PLACES.gitignore or not place.exists():
                continue
            if place.is_file() or any(path.is_file() for path in place.rglob("*")):
                lost.append(f"{place.name}: {line}")
        return lost
    status = gitops.git(folder, "status", "--porcelain", "--untracked-files=all").stdout
    lost = [f"changed: {line[3:]}" for line in status.splitlines() if line.strip()]
    unpushed = gitops.git(folder, "log", "--oneline", "--branches", "--not", "--remotes").stdout
    lost += [f"unpushed commit: {line}" for line in unpushed.splitlines() if line.strip()]
    return lost


def sync(team: Team, owner: str, alias: str, *, prune: bool = False) -> dict[str, Any]:
    """Fetch ``owner``'s activation ``alias`` from its ``origin`` and say where its branch
    stands against its upstream; the working tree is not touched."""
    record = find(team, owner, alias)
    if record.kind != "activation":
        raise WrongRepositoryKind(
            f"{alias} is a composite: it follows its shared repositories",
            repository_alias=alias,
            help="cuedeck_team.composites.follow moves its components",
        )
    folder = team.user_path(record)
    if gitops.remote_url(folder) is None:
        raise NoRemote(
            "Repository has no remote origin",
            repository_alias=alias,
            help="its shared repository has no source to fetch from",
        )
    before = gitops.refs(folder, "refs/remotes/origin/")
    fetch = ["fetch", "--quiet", "--no-write-fetch-head", *(["--prune"] if prune else []), "origin"]
    gitops.git(folder, *fetch, timeout=gitops.NETWORK_TIMEOUT)
    after = gitops.refs(folder, "refs/remotes/origin/")
    position = gitops.ahead_behind(folder)
    ahead, behind = position if position is not None else (0, 0)
    return {
        "success": True,
        "repository_alias": alias,
        "current_branch": gitops.current_branch(folder),
        "has_upstream": position is not None,
        "ahead": ahead,
        "behind": behind,
        "updated_refs": sorted(ref for ref, commit in after.items() if before.get(ref) != commit),
        "pruned_refs": sorted(set(before) - set(after)),
        "needs_pull": behind > 0,
        "needs_push": ahead > 0,
    }
