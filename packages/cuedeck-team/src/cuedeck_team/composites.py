"""Composites: several shared repositories searched, read and put in scenes as one.

A composite is a workspace of its own whose folders are its components, each a local
clone of a shared repository (object files hard-linked) named after it (``backend/``
for ``backend-global``). It has one index, so a search ranks every component's files
as one corpus: BM25's document frequencies and average length are counted over all of
them, and a hybrid search fuses one keyword ranking with one semantic ranking of the
whole. Per-component searches merged afterwards would rank a word rare in one component
and common in another by two different statistics, and interleave ranks that do not
compare. Paths name their component (``backend/src/auth.py``). Its components are
read-only to tools, like the shared repositories they copy; its own cards and memory
(``.cuedeck/``) are the user's, so a card can cite docs of several components and build
one scene from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from cuedeck.config import render_default_config
from cuedeck.errors import InvalidInput
from cuedeck.layout import CACHE_DIR, CARDS_DIR, CONFIG_PATH, DOCS_DIR
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import gitops
from cuedeck_team.activations import check_user_alias, making
from cuedeck_team.activations import find as find_activation
from cuedeck_team.disk import remove_tree
from cuedeck_team.errors import AliasTaken, WrongRepositoryKind
from cuedeck_team.home import index_workspace
from cuedeck_team.nodecache import ensure
from cuedeck_team.registry import is_global
from cuedeck_team.shared import find as find_shared

if TYPE_CHECKING:
    from cuedeck_team.home import Team
    from cuedeck_team.registry import Activation, Shared

Operation = Literal["add", "remove", "list"]


def create(team: Team, owner: str, alias: str, goldens: list[str]) -> dict[str, Any]:
    """Make ``owner``'s composite ``alias`` of the shared repositories ``goldens``."""
    name = check_user_alias(alias)
    shared = [find_shared(team, golden) for golden in dict.fromkeys(goldens)]
    with making(team, owner, name, "composite", "", "") as (record, folder):
        for sub in (CACHE_DIR, CARDS_DIR, DOCS_DIR):
            (folder / sub).mkdir(parents=True)
        (folder / CONFIG_PATH).write_text(render_default_config(), encoding="utf-8")
        for component in shared:
            _clone_component(team, record, component)
        with team.open(folder) as workspace:
            indexed = index_workspace(workspace, embed=False)
    return {
        "success": True,
        "repository_alias": name,
        "kind": "composite",
        "components": listing(team, record),
        **indexed,
    }


def manage(
    team: Team, owner: str, alias: str, operation: Operation, component: str | None
) -> dict[str, Any]:
    """Add a shared repository to ``owner``'s composite ``alias``, remove one, or list
    them; the components after the operation."""
    record = find_activation(team, owner, alias)
    if record.kind != "composite":
        raise WrongRepositoryKind(
            f"Composite repository '{alias}' not found: it is an activation of {record.golden}",
            repository_alias=alias,
            help="make a composite with activate_repository(..., composite=true)",
        )
    if operation != "list":
        if not component:
            raise InvalidInput(
                f"operation {operation!r} needs component_repo", field="component_repo"
            )
        with team.changing(f"user-{owner}-{alias}", alias):
            if operation == "add":
                _add(team, record, component)
            else:
                _remove(team, record, component)
            with team.open(team.user_path(record)) as workspace:
                index_workspace(workspace, embed=False)
    components = listing(team, record)
    reply: dict[str, Any] = {"success": True, "composite_alias": alias, "operation": operation}
    return {**reply, "components": components, "total_components": len(components)}


def listing(team: Team, record: Activation) -> list[dict[str, Any]]:
    """The components of a composite: alias, folder, whether its files are indexed."""
    folder = team.user_path(record)
    with team.open(folder) as workspace:
        workspace.refresh()  # cheap when nothing changed: stats only
        paths = workspace.index.paths
    return [
        {
            "alias": component.golden,
            "path": component.folder,
            "indexed": any(p.startswith(component.folder + "/") for p in paths),
        }
        for component in team.registry.components(record.owner, record.alias)
    ]


def _add(team: Team, record: Activation, golden: str) -> None:
    if not is_global(golden):
        raise WrongRepositoryKind(
            f"Component '{golden}' must be a global repository",
            repository_alias=golden,
            help="components are shared repositories, named <name>-global (list_global_repos)",
        )
    try:
        shared = find_shared(team, golden)
    except UnknownRepository as exc:
        exc.message = f"Component repository '{golden}' not found"
        exc.data["help"] = (
            "list_global_repos lists the shared repositories that can be added as components"
        )
        raise
    present = team.registry.components(record.owner, record.alias)
    if any(c.golden == shared.alias for c in present):
        raise AliasTaken(
            f"Component '{shared.alias}' already exists in composite",
            repository_alias=shared.alias,
            help="manage_composite_repository(..., 'list') shows the components",
        )
    _clone_component(team, record, shared)


def _clone_component(team: Team, record: Activation, shared: Shared) -> None:
    name = shared.alias.removesuffix("-global")
    present = {c.folder for c in team.registry.components(record.owner, record.alias)}
    folder, n = name, 2
    while folder in present or folder.startswith("."):
        folder, n = f"{name}-{n}", n + 1
    target = team.user_path(record) / folder
    remove_tree(target)
    gitops.clone(str(ensure(team, shared)), target)
    team.registry.add_component(record.owner, record.alias, shared.alias, folder)


def _remove(team: Team, record: Activation, golden: str) -> None:
    present = {c.golden: c for c in team.registry.components(record.owner, record.alias)}
    found = present.get(golden)
    if found is None:
        raise UnknownRepository(
            f"Component '{golden}' is not in composite {record.alias}",
            repository_alias=golden,
            candidates=sorted(present),
            help="manage_composite_repository(..., 'list') shows the components",
        )
    remove_tree(team.user_path(record) / found.folder)
    team.registry.remove_component(record.owner, record.alias, golden)


def follow(team: Team, record: Activation) -> dict[str, Any]:
    """Move every component of the composite ``record`` to its shared repository's head
    (components are read-only copies, so nothing of the user's is lost) and re-index."""
    folder = team.user_path(record)
    moved = []
    with team.changing(f"user-{record.owner}-{record.alias}", record.alias):
        for component in team.registry.components(record.owner, record.alias):
            target = folder / component.folder
            before = gitops.head(target)
            found = team.registry.find_shared(component.golden)
            if found is not None and found.state == "ready":  # this node's clone of it
                gitops.git(target, "remote", "set-url", "origin", str(ensure(team, found)))
            gitops.git(target, "fetch", "--quiet", "--no-write-fetch-head", "origin")
            gitops.git(target, "reset", "--quiet", "--hard", "@{upstream}")
            after = gitops.head(target)
            moved.append({"alias": component.golden, "previous_head": before, "head": after})
        with team.open(folder) as workspace:
            indexed = index_workspace(workspace, embed=False)
    return {
        "success": True,
        "repository_alias": record.alias,
        "kind": "composite",
        "components": moved,
        "updated": [entry["alias"] for entry in moved if entry["previous_head"] != entry["head"]],
        **indexed,
    }
