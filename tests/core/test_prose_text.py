"""Plain text: each paragraph a section, found by its first line or its lines."""

from __future__ import annotations

from typing import Any

from cuedeck import open_workspace
from cuedeck.scene import build_scene

NOTES = """\
Release checklist for the shop

Freeze the main branch the evening before and tell the support team.
Nobody merges after 18:00.

Run the reconciler by hand once against the staging provider
and compare the totals with yesterday's report.

Tag the release and write the changelog entry.
"""


def test_paragraphs_are_sections(make_workspace: Any) -> None:
    root = make_workspace({"notes/release.txt": NOTES, "one.txt": "Just one paragraph.\n"})
    workspace = open_workspace(root)
    document = workspace.document("notes/release.txt")
    assert document.language == "plaintext"
    assert document.title == "Release checklist for the shop"
    assert [(h.text, h.slug, h.line, h.end_line) for h in document.headings] == [
        ("Release checklist for the shop", "L1", 1, 2),
        ("Freeze the main branch the evening before and tell the support team.", "L3-L4", 3, 5),
        ("Run the reconciler by hand once against the staging provider", "L6-L7", 6, 8),
        ("Tag the release and write the changelog entry.", "L9", 9, 9),
    ]
    assert workspace.document("one.txt").headings == ()  # one paragraph: the whole file


def test_a_paragraph_is_cited_by_its_lines_or_its_first_line(make_workspace: Any) -> None:
    card = (
        "---\nid: rel001\ntitle: Release\nstatus: active\n---\n"
        "First @notes/release.txt#L6-L7, then\n"
        "@notes/release.txt#tag-the-release-and-write-the-changelog-entry.\n"
    )
    root = make_workspace({".cuedeck/cards/rel001.md": card, "notes/release.txt": NOTES})
    scene = build_scene(open_workspace(root), "rel001", token_limit=2000)
    assert "```plaintext\nRun the reconciler by hand once against the staging provider\n" in (
        scene.text
    )
    assert "```plaintext\nTag the release and write the changelog entry.\n```" in scene.text
    assert "Freeze the main branch" not in scene.text
