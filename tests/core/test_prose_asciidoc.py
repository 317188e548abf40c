"""AsciiDoc: titles with the ids Asciidoctor generates, anchors, and the references it
follows, in the index, the reference graph and a scene."""

from __future__ import annotations

from typing import Any

from cuedeck import open_workspace
from cuedeck.prose.asciidoc import scan_asciidoc, section_id
from cuedeck.prose.sections import nest
from cuedeck.scene import build_scene
from cuedeck.text import split_lines

GUIDE = """\
= Shop Operations Guide
Jane Doe <jane@example.com>
:toc:
:includedir: _includes

The operations guide for the shop.

[[settlement]]
== Nightly settlement

The reconciler runs at 02:00 UTC. See <<refunds>> and xref:deploy.adoc#rollback[rolling back].

----
== Not a title: a listing block
include::../src/settle.py[lines=3..5]
----

[#refunds.important]
=== Refunds & Disputes

A refund asked for after the cut-off waits for the next night. [[cutoff]]The cut-off is fixed.

include::{includedir}/table.adoc[]

== Wiley & Sons, Inc.

link:faq.adoc#top[FAQ]

== Nightly settlement

The same title again, with its own id.

////
== Commented out
////
"""

SETTLE = "import time\n\n\ndef settle(batch):\n    return len(batch)\n\n\nHOUR = 2\n"


def _headings(text: str) -> list[tuple[int, str, str, int, int]]:
    lines = split_lines(text)
    found, _, _ = scan_asciidoc(lines, "docs/ops.adoc")
    return [(h.level, h.text, h.slug, h.line, h.end_line) for h in nest(found, len(lines))]


def test_titles_levels_and_ids() -> None:
    assert _headings(GUIDE) == [
        (1, "Shop Operations Guide", "_shop_operations_guide", 1, 35),
        (2, "Nightly settlement", "settlement", 9, 24),  # [[settlement]] above it
        (3, "Refunds & Disputes", "refunds", 19, 24),  # [#refunds.important]
        (2, "Wiley & Sons, Inc.", "_wiley_sons_inc", 25, 28),  # Asciidoctor's own example
        (2, "Nightly settlement", "_nightly_settlement", 29, 35),  # the first has its own id
    ]  # nothing from the listing block or the comment block


def test_generated_ids_follow_the_documents_attributes() -> None:
    assert section_id("Wiley & Sons, Inc.") == "_wiley_sons_inc"
    assert section_id("Wiley & Sons, Inc.", "", "-") == "wiley-sons-inc"
    assert section_id("The <em>Big</em> Picture") == "_the_big_picture"
    text = ":idprefix:\n:idseparator: -\n\n== First Steps\n\n== First Steps\n"
    assert [slug for _, _, slug, _, _ in _headings(text)] == ["first-steps", "first-steps-2"]


def test_anchors_references_and_includes(make_workspace: Any) -> None:
    root = make_workspace(
        {
            "docs/ops.adoc": GUIDE,
            "docs/deploy.adoc": "= Deploying\n\n[[rollback]]\n== Rolling back\n\nRedeploy.\n",
            "docs/_includes/table.adoc": "|===\n|Amount |Approval\n|===\n",
            "src/settle.py": SETTLE,
        }
    )
    workspace = open_workspace(root)
    document = workspace.document("docs/ops.adoc")
    assert document.language == "asciidoc"
    refunds = document.find_heading("cutoff")  # an anchor inside a section names it
    assert refunds is not None and refunds.slug == "refunds"
    assert [(r.kind, r.target, r.anchor, r.line) for r in document.references] == [
        ("link", "docs/ops.adoc", "refunds", 11),
        ("link", "docs/deploy.adoc", "rollback", 11),
        ("include", "src/settle.py", "L3-L5", 15),  # read inside a listing block too
        ("include", "docs/_includes/table.adoc", None, 23),  # {includedir} resolved
        ("link", "docs/faq.adoc", "top", 27),
    ]
    problems = [p.message for p in workspace.graph.problems if p.path == "docs/ops.adoc"]
    assert problems == [
        "reference 'link:faq.adoc#top[FAQ]' points at docs/faq.adoc, which does not exist"
    ]


def test_an_asciidoc_section_is_cited_in_a_scene(make_workspace: Any) -> None:
    card = (
        "---\nid: ops001\ntitle: Settle faster\nstatus: active\n---\nSee @docs/ops.adoc#refunds.\n"
    )
    root = make_workspace(
        {
            ".cuedeck/cards/ops001.md": card,
            "docs/ops.adoc": GUIDE,
            "docs/_includes/table.adoc": "|===\n|Amount |Approval\n|===\n",
        }
    )
    scene = build_scene(open_workspace(root), "ops001", token_limit=4000)
    assert "## docs/ops.adoc#refunds · section\n\n```asciidoc\n[#refunds.important]" not in (
        scene.text
    )  # the section starts at its title; the anchor line above belongs to the one before
    assert "## docs/ops.adoc#refunds · section\n\n```asciidoc\n=== Refunds & Disputes\n" in (
        scene.text
    )
    assert "## docs/_includes/table.adoc\n\n```asciidoc\n|===\n|Amount" in scene.text
