"""What indexes a workspace holds, as every plugin reports them (``register_index_reports``).

A team server shows these when it describes a shared repository: which indexes exist,
whether each is ready, and its figures. Reporting never builds an index.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")


class IndexReport(TypedDict):
    """One index of a workspace: its name, whether it is ready to answer, a one-line
    summary and its figures."""

    name: str
    ready: bool
    summary: str
    details: dict[str, Any]


def documents_report(workspace: Workspace) -> IndexReport:
    """Core's own index: the files it holds, by language."""
    languages = workspace.fresh_index().summary()["languages"]
    total = sum(languages.values())
    top = sorted(languages.items(), key=lambda item: (-item[1], item[0]))[:6]
    parts = ", ".join(f"{name} {count:,}" for name, count in top)
    return {
        "name": "documents",
        "ready": True,
        "summary": f"{total:,} files" + (f" ({parts})" if parts else ""),
        "details": {"files": total, "languages": languages},
    }


def index_reports(workspace: Workspace) -> list[IndexReport]:
    """Every index ``workspace`` holds, core's first then the plugins' by name; a
    reporter that fails is logged and skipped (a description must not fail)."""
    reports = [documents_report(workspace)]
    reporters = workspace.plugins.items("register_index_reports")
    for name, reporter in sorted(reporters.items()):
        try:
            found = reporter(workspace)
        except Exception as exc:  # a plugin's bug must not hide the other indexes
            log.warning("reporting %s's index failed: %s: %s", name, type(exc).__name__, exc)
            continue
        if found is not None:
            reports.append(found)
    return reports
