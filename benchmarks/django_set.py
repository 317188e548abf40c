"""A public held-out retrieval set built from Django's documentation (issue 26).

Nothing in CueDeck was tuned on it. Built from the ``Django`` source distribution on the
package index (BSD-3-Clause; ``pip download --no-binary :all: --no-deps Django==5.1.4``,
or pass the file with ``--django-sdist``), exactly as follows:

- The corpus is every ``docs/**/*.txt`` page except ``docs/releases/`` (release notes),
  turned into markdown: a reST title (a text line with an under- or overline of one
  punctuation character) becomes a ``#`` heading, levels in the order the styles first
  appear in the page; every other line is kept as it is.
- **FAQ queries**: each question of ``docs/faq/*.txt`` (a heading ending in ``?``) is a
  query; its answer becomes a page of its own (``faq/<page>-<n>.md``) without the
  question, and is the one relevant page (grade 2). The FAQ pages themselves are
  replaced by these answers.
- **Heading queries**: among the other pages' headings of level 2 or deeper with at
  least four words, no backquote and no twin elsewhere, the first ``headings`` in order of
  the sha256 of ``path + heading`` are queries; the heading line is deleted from its page,
  which is the one relevant page (grade 2).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

VERSION = "5.1.4"
_PUNCTUATION = set("=-~^*\"'+#`:._")


def sdist(into: Path, given: Path | None = None) -> Path:
    """The Django sdist: ``given``, or downloaded once into ``into`` with pip."""
    if given is not None:
        return given
    found = sorted(into.glob(f"[Dd]jango-{VERSION}.tar.gz"))
    if found:
        return found[0]
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
         f"Django=={VERSION}", "-d", str(into), "-q"],
        check=True,
    )  # fmt: skip
    return sorted(into.glob(f"[Dd]jango-{VERSION}.tar.gz"))[0]


def pages(archive: Path) -> dict[str, str]:
    """The documentation pages (path under docs/ -> reST text), release notes left out."""
    found: dict[str, str] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if len(parts) < 3 or parts[1] != "docs" or not member.name.endswith(".txt"):
                continue
            if parts[2] == "releases" or not member.isfile():
                continue
            data = tar.extractfile(member)
            if data is not None:
                found["/".join(parts[2:])] = data.read().decode("utf-8", "replace")
    return found


def markdown(text: str) -> list[tuple[int, str] | str]:
    """The lines of a reST page, titles as ``(level, text)``, other lines as they are."""
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    out: list[tuple[int, str] | str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        over = _rule(line)
        if over and index + 2 < len(lines) and _rule(lines[index + 2]) == over:
            title = lines[index + 1].strip()
            if title and not _rule(lines[index + 1]):
                style = (over, True)
                out.append((_level(styles, style), title))
                index += 3
                continue
        under = _rule(lines[index + 1]) if index + 1 < len(lines) else None
        title = line.strip()
        if under and title and not _rule(line) and len(lines[index + 1].strip()) >= len(title):
            out.append((_level(styles, (under, False)), title))
            index += 2
            continue
        out.append(line)
        index += 1
    return out


def _rule(line: str) -> str | None:
    stripped = line.strip()
    if len(stripped) >= 3 and len(set(stripped)) == 1 and stripped[0] in _PUNCTUATION:
        return stripped[0]
    return None


def _level(styles: list[tuple[str, bool]], style: tuple[str, bool]) -> int:
    if style not in styles:
        styles.append(style)
    return min(styles.index(style) + 1, 6)


def _render(lines: list[tuple[int, str] | str]) -> str:
    return "\n".join(f"{'#' * x[0]} {x[1]}" if isinstance(x, tuple) else x for x in lines) + "\n"


def build(archive: Path, target: Path, headings: int = 150) -> list[dict[str, Any]]:
    """Write the corpus into ``target`` (a workspace folder); its queries."""
    source = {path: markdown(text) for path, text in pages(archive).items()}
    queries: list[dict[str, Any]] = []
    files: dict[str, list[tuple[int, str] | str]] = {}
    for path, lines in sorted(source.items()):
        if not path.startswith("faq/") or path == "faq/index.txt":
            files[path[:-4] + ".md"] = lines
            continue
        stem = path[4:-4]
        current: list[tuple[int, str] | str] | None = None
        number = 0
        for line in lines:
            if isinstance(line, tuple) and line[1].endswith("?"):
                number += 1
                current = []
                answer = f"faq/{stem}-{number}.md"
                files[answer] = current
                queries.append({"id": f"faq-{stem}-{number}", "kind": "faq", "query": line[1],
                                "relevant": {answer: 2}})  # fmt: skip
            elif current is not None and not isinstance(line, tuple):
                current.append(line)
    seen: dict[str, int] = {}
    for lines in files.values():
        for line in lines:
            if isinstance(line, tuple):
                seen[line[1].lower()] = seen.get(line[1].lower(), 0) + 1
    candidates = [
        (hashlib.sha256(f"{path}\0{line[1]}".encode()).hexdigest(), path, line)
        for path, lines in files.items()
        if not path.startswith("faq/")
        for line in lines
        if isinstance(line, tuple)
        and line[0] >= 2
        and len(line[1].split()) >= 4
        and "`" not in line[1]
        and seen[line[1].lower()] == 1
    ]
    for _, path, line in sorted(candidates)[:headings]:
        files[path] = [x for x in files[path] if x is not line]
        queries.append({"id": f"h-{len(queries)}", "kind": "heading", "query": line[1],
                        "relevant": {path: 2}})  # fmt: skip
    (target / ".cuedeck").mkdir(parents=True, exist_ok=True)
    for path, lines in files.items():
        page = target / path
        text = _render(lines)
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(text, encoding="utf-8")
    return queries
