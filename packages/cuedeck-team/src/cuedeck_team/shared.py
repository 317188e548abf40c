"""Shared repositories: registered by an admin, cloned and indexed once, read by all.

A shared repository is the server's own clone of the source (a path or URL the server
can reach), checked out on one branch at the head the registry records, with a CueDeck
index of its docs and code and a vector for every section. With a node cache each node
has its own clone, rebuilt at the registered head (:mod:`cuedeck_team.nodecache`). No
tool writes it (the MCP server refuses every writing tool aimed at it); an admin refreshes
it from its source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.progress import report
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import gitops
from cuedeck_team.catalog import CATALOG_ALIAS
from cuedeck_team.disk import footprint, remove_tree
from cuedeck_team.home import index_workspace, prepare_workspace
from cuedeck_team.nodecache import ensure, ensure_locked, head_file, node_lock, note_head
from cuedeck_team.registry import global_alias, now

if TYPE_CHECKING:
    from cuedeck_team.home import Team
    from cuedeck_team.registry import Shared


def find(team: Team, alias: str) -> Shared:
    """The ready shared repository ``alias``, or 1400 naming the ones there are."""
    from cuedeck.errors import did_you_mean, suggestion_text

    found = team.registry.find_shared(alias)
    if found is None or found.state != "ready":
        known = [record.alias for record in team.registry.shared()]
        matches = did_you_mean(alias, known)
        raise UnknownRepository(
            f"no shared repository {alias!r}",
            repository_alias=alias,
            suggestion=suggestion_text(matches),
            candidates=matches or known[:10],
            help="list_global_repos lists the shared repositories",
        )
    return found


def register(
    team: Team,
    source: str,
    alias: str,
    *,
    branch: str | None = None,
    by: str,
    embed: bool = True,
) -> dict[str, Any]:
    """Clone ``source`` as the shared repository ``<alias>-global`` and index it."""
    name = global_alias(alias)
    if name == CATALOG_ALIAS:
        from cuedeck.errors import InvalidInput

        raise InvalidInput(
            f"{name} is the catalog of shared repositories: pick another alias", field="alias"
        )
    url = gitops.check_source(source, team.root)
    if branch is not None:
        from cuedeck_git.refs import check_ref_name

        check_ref_name(branch, field="branch")
    with team.changing(f"shared-{name}", name):
        team.clear_unfinished_shared(name)
        record = team.registry.begin_shared(name, gitops.without_credentials(source), "", by)
        folder = team.shared_path(record)
        try:
            remove_tree(folder)  # whatever an earlier crash left there
            report(0, 3, "Registering a repository")
            gitops.clone(url, folder, branch=branch)
            report(1, 3, "Registering a repository")
            prepare_workspace(folder)
            with team.open(folder) as workspace:
                indexed = index_workspace(workspace, embed=embed)
            report(2, 3, "Registering a repository")
            checked_out, head = gitops.current_branch(folder), gitops.head(folder)
            note_head(folder, head)
            team.registry.update_shared(
                name, state="ready", branch=checked_out, indexed=now(), head=head
            )
            report(3, 3, "Registering a repository")
        except BaseException:
            remove_tree(folder)
            team.registry.drop_shared(name)
            raise
    return {
        "success": True,
        "alias": name,
        "branch": checked_out,
        "head": gitops.head(folder),
        **indexed,
    }


def refresh(team: Team, alias: str, *, embed: bool = True) -> dict[str, Any]:
    """Fetch the shared repository ``alias`` from its source, move it to the source's
    branch head, and bring its index up to date (only changed files are parsed)."""
    record = find(team, alias)
    with team.changing(f"shared-{record.alias}", record.alias), node_lock(team, record):
        folder = ensure_locked(team, record)  # at the head the last change on any node left
        before = gitops.head(folder)
        gitops.git(folder, "fetch", "--quiet", "--prune", "origin", timeout=gitops.NETWORK_TIMEOUT)
        target = f"refs/remotes/origin/{record.branch}"
        gitops.git(folder, "reset", "--quiet", "--hard", target)
        with team.open(folder) as workspace:
            indexed = index_workspace(workspace, embed=embed)
        after = gitops.head(folder)
        note_head(folder, after)
        team.registry.update_shared(record.alias, indexed=now(), head=after)
    return {
        "success": True,
        "alias": record.alias,
        "branch": record.branch,
        "previous_head": before,
        "head": after,
        "changed": before != after,
        **indexed,
    }


def remove(team: Team, alias: str) -> dict[str, Any]:
    """Forget the shared repository ``alias`` and delete its clone and indexes.

    Activations and composites made from it are independent copies and stay.
    """
    record = find(team, alias)
    folder = team.shared_path(record)
    with team.changing(f"shared-{record.alias}", record.alias), node_lock(team, record):
        team.registry.update_shared(record.alias, state="removing")
        size = footprint(folder)
        team.removing(record.generation)
        remove_tree(folder)
        head_file(folder).unlink(missing_ok=True)
        team.registry.drop_shared(record.alias)
    return {
        "success": True,
        "alias": record.alias,
        "space_freed_bytes": size.own,
        "space_freed_mb": round(size.own / 2**20, 2),
    }


def describe(team: Team, record: Shared, *, detail: bool = False) -> dict[str, Any]:
    """What ``list_global_repos`` (and, with ``detail``, ``global_repo_status``) says of a
    shared repository."""
    # The registered head: what every node serves (this node may not have cloned it yet).
    folder = ensure(team, record) if detail else team.shared_path(record)
    entry: dict[str, Any] = {
        "alias": record.alias,
        "source": record.source,
        "branch": record.branch,
        "head": record.head or gitops.head(folder),
        "indexed_at": record.indexed,
        "registered_at": record.created,
        "registered_by": record.created_by,
        "description": record.description,
    }
    if detail:
        from cuedeck.serving.indexes import index_reports

        with team.open(folder) as workspace:
            index = workspace.index
            index.refresh()  # the files on disk are the truth; cheap when nothing changed
            entry["files"] = len(index.paths)
            entry["indexes"] = index_reports(workspace)
        size = footprint(folder)
        entry["disk_bytes"] = size.total
        entry["branches"] = sorted(
            ref.removeprefix("refs/remotes/origin/")
            for ref in gitops.refs(folder, "refs/remotes/origin/")
        )
    return entry


def set_description(team: Team, alias: str, text: str) -> dict[str, Any]:
    """Give the shared repository ``alias`` the description ``text`` (empty: remove it);
    the catalog shows it from the next read."""
    record = find(team, alias)
    team.registry.update_shared(record.alias, description=text.strip())
    return {"success": True, "alias": record.alias, "description": text.strip()}
