"""The catalog: ``cidx-meta-global``, a read-only repository describing the shared ones.

One markdown file per shared repository (``NAME-global.md``: what it is, from an
admin's description and its README; its source, branch and head; its files by language;
which indexes exist, SCIP ones included; its top-level folders) and a ``README.md``
listing them. Members read it with the file and search tools like any shared
repository, so an agent finds which repository to look in before searching.

The catalog is derived: each node writes its own copy under the team's folder from the
registry, and writes it again whenever the registry has changed since (a repository
added, refreshed or removed, a description set), on the next call that reads it. Nothing
in it is edited by hand; no tool writes it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING

from cuedeck.progress import report
from cuedeck_team import gitops

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.serving.indexes import IndexReport
    from cuedeck.workspace import Workspace
    from cuedeck_team.home import Team
    from cuedeck_team.registry import Shared

log = logging.getLogger("cuedeck")

#: The catalog's alias, as the code-indexer specification names it.
CATALOG_ALIAS = "cidx-meta-global"
#: The generation under which servers keep the catalog's runtime (never in the registry).
CATALOG_GENERATION = "catalog"
#: Bumped when the entries' layout changes, so every node writes its catalog again.
LAYOUT = 1
#: How much of a README's opening the catalog quotes.
README_CHARS = 1200
_README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md")


def catalog_path(team: Team) -> Path:
    """The folder of this node's catalog (in its node cache when it has one)."""
    return (team.node_cache or team.folder) / "catalog"


def entry_name(alias: str) -> str:
    """The catalog file describing the shared repository ``alias``."""
    return f"{alias}.md"


def fingerprint(team: Team) -> str:
    """What the catalog is written from: every ready shared repository (its generation,
    head, description and when it was indexed). A change means it is out of date."""
    state = {
        "layout": LAYOUT,
        "shared": [
            [r.alias, r.generation, r.indexed, r.branch, r.head, r.description]
            for r in team.registry.shared()
        ],
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]


def ensure(team: Team) -> Path:
    """The catalog's folder, written again first when the registry changed since."""
    folder = catalog_path(team)
    stamp = folder / ".cuedeck" / ".cache" / "catalog-stamp"
    wanted = fingerprint(team)
    if _read(stamp) == wanted:
        return folder
    with team.changing("catalog", CATALOG_ALIAS):
        wanted = fingerprint(team)  # another worker may have written it meanwhile
        if _read(stamp) != wanted:
            write(team, folder)
            _write(folder, stamp, wanted.encode())
    return folder


def write(team: Team, folder: Path) -> None:
    """Write every entry and the README into ``folder``, removing entries of repositories
    that are gone."""
    from cuedeck.config import render_default_config
    from cuedeck.layout import CACHE_DIR, CONFIG_PATH

    (folder / CACHE_DIR).mkdir(parents=True, exist_ok=True)
    if not (folder / CONFIG_PATH).is_file():
        _write(folder, folder / CONFIG_PATH, render_default_config().encode())
    records = team.registry.shared()
    lines: list[str] = []
    for done, record in enumerate(records):
        report(done, len(records), "Writing the repository catalog")
        text, summary = entry(team, record)
        _write(folder, folder / entry_name(record.alias), text.encode())
        lines.append(f"- [{record.alias}]({entry_name(record.alias)}): {summary}")
    report(len(records), len(records), "Writing the repository catalog")
    keep = {entry_name(record.alias) for record in records} | {"README.md"}
    for stale in folder.glob("*.md"):
        if stale.name not in keep:
            stale.unlink(missing_ok=True)
    readme = [
        f"# {CATALOG_ALIAS}",
        "",
        "The team's shared repositories, one file each: what it is, its source and head,",
        "its languages and size, and which indexes exist (SCIP ones included). Written by",
        "the server from its registry; read-only.",
        "",
        *(lines or ["No shared repository is registered yet."]),
        "",
    ]
    _write(folder, folder / "README.md", "\n".join(readme).encode())


def entry(team: Team, record: Shared) -> tuple[str, str]:
    """The catalog file of the shared repository ``record`` and its one-line summary."""
    from cuedeck.serving.indexes import index_reports
    from cuedeck_team.disk import footprint
    from cuedeck_team.nodecache import ensure

    folder = ensure(team, record)  # this node's clone at the registered head
    with team.open(folder) as workspace:
        reports = index_reports(workspace)
        opening = readme_opening(workspace)
        folders = top_folders(workspace)
    languages = reports[0]["details"].get("languages", {}) if reports else {}
    files = sum(languages.values())
    size = footprint(folder).total
    summary = (record.description or opening).split("\n", 1)[0].strip()
    summary = _shorten(summary or "no description", 160)
    out = [f"# {record.alias}", ""]
    if record.description:
        out += [record.description, ""]
    if opening:
        out += [
            "From its README:",
            "",
            *(f"> {line}" if line else ">" for line in opening.split("\n")),
            "",
        ]
    out += [
        "| | |",
        "| --- | --- |",
        f"| source | {record.source} |",
        f"| branch | {record.branch} |",
        f"| head | {record.head or gitops.head(folder)} |",
        f"| registered | {record.created} by {record.created_by} |",
        f"| indexed | {record.indexed} |",
        f"| files indexed | {files:,} |",
        f"| size on disk | {size / 2**20:.1f} MB |",
        "",
        "## Languages",
        "",
        *(
            f"- {name}: {count:,} files"
            for name, count in sorted(languages.items(), key=lambda item: (-item[1], item[0]))
        ),
        "",
        "## Indexes",
        "",
        *(index_line(found) for found in reports),
        "",
        "## Layout",
        "",
        *(f"- `{name}` {count:,} files" for name, count in folders),
        "",
        f"Search it with `search_code(..., repository_alias={record.alias!r})`; "
        f"`global_repo_status({record.alias!r})` says the same as a structure.",
        "",
    ]
    return "\n".join(out), summary


def index_line(found: IndexReport) -> str:
    """One index as the catalog lists it."""
    state = "ready" if found["ready"] else "not ready"
    return f"- **{found['name']}** ({state}): {found['summary']}"


def readme_opening(workspace: Workspace) -> str:
    """The first paragraphs of the repository's README (headings, badges and images
    left out), up to :data:`README_CHARS` characters; empty when it has none."""
    for name in _README_NAMES:
        path = workspace.root / name
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return ""
            return _opening(text)
    return ""


def top_folders(workspace: Workspace, limit: int = 15) -> list[tuple[str, int]]:
    """The indexed files per top-level folder (files at the top as ``./``), largest first."""
    counts: dict[str, int] = {}
    for path in workspace.fresh_index().paths:
        head = path.split("/", 1)[0] + "/" if "/" in path else "./"
        counts[head] = counts.get(head, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _opening(text: str) -> str:
    kept: list[str] = []
    size = 0
    for block in text.replace("\r\n", "\n").split("\n\n"):
        block = block.strip()
        if not block or block.startswith(("#", "[![", "![", "<", "===", "---", "..", ":")):
            continue
        if set(block) <= set("=-~^*#` \n"):
            continue
        kept.append(block)
        size += len(block)
        if size >= README_CHARS or len(kept) >= 3:
            break
    return _shorten("\n\n".join(kept), README_CHARS)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _write(root: Path, path: Path, data: bytes) -> None:
    from cuedeck.writes import rewrite_file

    rewrite_file(root, path, lambda _current: data, display=path.name)
