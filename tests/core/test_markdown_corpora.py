"""The fast scanner agrees with mistletoe, the parser of record, on real corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.markdown.document import parse_document
from cuedeck.token_counts import EstimateCounter

count = EstimateCounter().count


def _compare(root: Path) -> tuple[int, list[str]]:
    files = sorted(root.rglob("*.md"))
    differing = []
    for file in files:
        rel = file.relative_to(root).as_posix()
        data = file.read_bytes()
        fast = parse_document(rel, data, count_tokens=count, engine="fast")
        reference = parse_document(rel, data, count_tokens=count, engine="mistletoe")
        if fast != reference:
            differing.append(rel)
    return len(files), differing


@pytest.mark.slow
def test_fastapi_docs_parse_identically(fastapi_docs: Path) -> None:
    total, differing = _compare(fastapi_docs)
    assert total == 155
    assert differing == []


@pytest.mark.slow
def test_tldr_pages_parse_identically(tldr_pages: Path) -> None:
    total, differing = _compare(tldr_pages)
    assert total > 7000
    assert differing == []


def test_fastapi_docs_have_headings_and_links(fastapi_docs: Path) -> None:
    data = (fastapi_docs / "tutorial" / "first-steps.md").read_bytes()
    doc = parse_document("tutorial/first-steps.md", data, count_tokens=count)
    assert doc.headings[0].level == 1
    assert all(h.slug for h in doc.headings)
    assert all(h.line <= h.end_line <= doc.line_count for h in doc.headings)
