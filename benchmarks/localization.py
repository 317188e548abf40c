"""A localization set built from a public repository's own history, and its metrics.

    from benchmarks.localization import build_cases, base_tree, score

Each case is a change merged into the main line: its title is the query, the non-test
source files it modified (that exist in the base tree) are the answer. Every case is
answered against one base tree: the main line just before the oldest case, so no answer
already holds the change it is asked about. Merges of branches, releases and changes of
more than ``max_files`` source files are left out (they localise nothing).

The repository is a git directory read with ``git`` (a snapshot of pallets/click, for
one: the ``fetch`` tool of the workplace, or any clone). Used by benchmarks/code.py and
meant for scenes too; nothing here tunes anything.
"""

from __future__ import annotations

import re
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import attrs

_PR = re.compile(r"^Merge pull request #(\d+) from \S+")
_SKIP = re.compile(r"^(merge (branch|remote)|release |bump |prepare |start version)", re.I)
_NUMBER = re.compile(r"\s*\(#\d+\)\s*$")


@attrs.frozen
class Case:
    """One query and the files that answer it."""

    commit: str
    query: str
    answers: tuple[str, ...]


def git(repo: Path, *args: str) -> str:
    """``git args`` in the git directory ``repo`` (bare or not), as text."""
    found = subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, check=True)
    return found.stdout.decode("utf-8", errors="replace")


def _title(subject: str, body: str) -> str:
    """A merged change's title: a squash merge's subject without ``(#N)``, or the first
    line of a merge commit's body."""
    if _PR.match(subject):
        return body.strip().splitlines()[0].strip() if body.strip() else ""
    return _NUMBER.sub("", subject).strip()


def source_file(path: str, sources: tuple[str, ...]) -> bool:
    """A non-test source file under one of ``sources``."""
    name = path.rsplit("/", 1)[-1]
    return (
        path.startswith(sources)
        and path.endswith(".py")
        and "/tests/" not in f"/{path}"
        and not name.startswith("test_")
    )


def build_cases(
    repo: Path,
    *,
    head: str = "HEAD",
    merges: int = 300,
    sources: tuple[str, ...] = ("src/",),
    max_files: int = 4,
) -> tuple[str, list[Case]]:
    """``(base commit, cases)`` from the last ``merges`` changes merged into ``head``."""
    log = git(
        repo, "log", "--first-parent", f"-{merges}", "--format=%H%x1f%P%x1f%s%x1f%b%x1e", head
    )
    found: list[tuple[str, str, str]] = []  # (commit, first parent, title)
    for record in log.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        commit, parents, subject, body = record.split("\x1f")
        parent_list = parents.split()
        if len(parent_list) < 2 and not _NUMBER.search(subject):
            continue  # a direct commit, not a merged change
        title = _title(subject, body)
        if not title or _SKIP.match(title) or _SKIP.match(subject):
            continue
        found.append((commit, parent_list[0], title))
    if not found:
        return head, []
    base = found[-1][1]  # the main line just before the oldest change
    at_base = set(git(repo, "ls-tree", "-r", "--name-only", base).splitlines())
    cases = []
    for commit, parent, title in found:
        changed = git(repo, "diff", "--name-only", parent, commit).splitlines()
        answers = tuple(sorted(p for p in changed if source_file(p, sources) and p in at_base))
        if answers and len(answers) <= max_files:
            cases.append(Case(commit, title, answers))
    return base, cases[::-1]


def base_tree(repo: Path, base: str, into: Path) -> Path:
    """The files of ``base`` written under ``into`` (made a CueDeck workspace)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into.with_suffix(".tar")
    with archive.open("wb") as out:
        subprocess.run(["git", f"--git-dir={repo}", "archive", base], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    (into / ".cuedeck" / "docs").mkdir(parents=True, exist_ok=True)
    (into / ".cuedeck" / "cards").mkdir(parents=True, exist_ok=True)
    return into


def score(ranked: list[list[str]], cases: list[Case]) -> dict[str, Any]:
    """File-level Hit@1/@5/@10 (any answer file in the top k) and MRR (first answer)."""
    hits = {1: 0, 5: 0, 10: 0}
    reciprocal = 0.0
    for found, case in zip(ranked, cases, strict=True):
        rank = next((i for i, path in enumerate(found, 1) if path in case.answers), None)
        if rank is None:
            continue
        reciprocal += 1.0 / rank
        for k in hits:
            hits[k] += rank <= k
    n = max(len(cases), 1)
    return {
        "cases": len(cases),
        "hit@1": round(hits[1] / n, 3),
        "hit@5": round(hits[5] / n, 3),
        "hit@10": round(hits[10] / n, 3),
        "mrr": round(reciprocal / n, 3),
    }
