"""Splitting documents into sections."""

from __future__ import annotations

from cuedeck.markdown.document import parse_document
from cuedeck.text import split_lines
from cuedeck_search.sections import split_sections

TEXT = """---
title: Guide
tags: [x]
---
Intro before any heading.

# Guide

Top text.

## Install

```bash
pip install thing
```

Run the installer.

### On Windows

Use the MSI.

## Usage

Call it.
"""


def sections_of(text: str, path: str = "docs/guide.md") -> list:  # type: ignore[type-arg]
    data = text.encode()
    document = parse_document(path, data, count_tokens=len)
    return split_sections(document, split_lines(text))


def test_sections_cover_the_body_without_overlap() -> None:
    sections = sections_of(TEXT)
    assert [s.anchor for s in sections] == [None, "Guide", "Install", "On Windows", "Usage"]
    assert [(s.line, s.end_line) for s in sections] == [
        (5, 6),
        (7, 10),
        (11, 18),
        (19, 22),
        (23, 25),
    ]
    assert "title:" not in sections[0].text  # frontmatter is not searchable text


def test_heading_path_gives_context() -> None:
    windows = sections_of(TEXT)[3]
    assert windows.heading_path == ("Guide", "Install", "On Windows")
    assert windows.embedding_text.startswith("Guide > Install > On Windows\n")


def test_prose_leaves_code_out_but_text_keeps_it() -> None:
    install = sections_of(TEXT)[2]
    assert "pip install thing" in install.text
    assert "pip install thing" not in install.prose
    assert "Run the installer." in install.prose


def test_hash_follows_the_embedded_text_only() -> None:
    before = sections_of(TEXT)
    after = sections_of(TEXT.replace("Call it.", "Call it twice."))
    assert [s.hash for s in before[:4]] == [s.hash for s in after[:4]]
    assert before[4].hash != after[4].hash


def test_a_file_without_text_is_still_one_section() -> None:
    (only,) = sections_of("---\ntitle: Empty\n---\n", "notes/empty.md")
    assert only.heading_path == ("Empty",)
