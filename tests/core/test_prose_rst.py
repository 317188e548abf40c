"""reStructuredText: titles and anchors as docutils (Sphinx) makes them, the references
Sphinx follows, and a Sphinx project's sections cited in a scene.

docutils, the reference implementation, is the oracle of titles and ids: every file of
tests/core/sphinx_project (a small Sphinx project written for these tests) and, in a
slow test, every docstring with sections of the installed numpy.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path
from typing import Any

import docutils.core
import docutils.nodes
import pytest

from cuedeck import open_workspace
from cuedeck.prose.rst import scan_rst, title_text
from cuedeck.prose.sections import nest
from cuedeck.scene import build_scene
from cuedeck.serving.read_doc import read_doc
from cuedeck.text import split_lines
from tests.conftest import needs

PROJECT = Path(__file__).parent / "sphinx_project"
SOURCE = "docs/source"

CARD = """---
id: refund
title: Refunds wait a night too long
status: active
---
Customers wait two nights. Read @docs/source/install.rst#refund-policy and the
settlement schedule, @setup.cfg#L4-L6.
"""


def docutils_sections(text: str) -> tuple[list[tuple[str, list[str]]], int]:
    """``(title, ids)`` of every section docutils finds (Sphinx keeps the top one a
    section: no document title), and how many errors it reported."""
    tree = docutils.core.publish_doctree(
        text,
        settings_overrides={
            "report_level": 5,
            "halt_level": 5,
            "doctitle_xform": False,
            "file_insertion_enabled": False,
            "raw_enabled": False,
        },
    )
    sections = [(s[0].astext(), list(s["ids"])) for s in tree.findall(docutils.nodes.section)]
    errors = sum(m["level"] >= 3 for m in tree.findall(docutils.nodes.system_message))
    return sections, errors


def ours(text: str, path: str = "x.rst") -> list[Any]:
    lines = split_lines(text)
    found, _, _ = scan_rst(lines, path, frozenset())
    return list(nest(found, len(lines)))


def test_each_title_and_id_is_docutils_own() -> None:
    files = sorted(PROJECT.rglob("*.rst"))
    assert len(files) == 5
    for file in files:
        text = file.read_text(encoding="utf-8")
        expected, _ = docutils_sections(text)
        headings = ours(text)
        assert [(h.text, h.slug) for h in headings] == [(t, ids[0]) for t, ids in expected], file
        for heading, (_, ids) in zip(headings, expected, strict=True):
            # A label above a title is another id of its section: an alias here.
            assert set(ids) <= {heading.slug, *heading.aliases}, heading.text


@pytest.mark.parametrize(
    ("text", "titles"),
    [
        ("Para\n\nTitle\n---\n\ntext\n", []),  # an underline too short (under 4)
        ("Para\n\nLonger title\n----\n\ntext\n", ["Longer title"]),  # 4 is enough
        ("Para\nTitle\n-----\n\ntext\n", []),  # inside a paragraph
        ("Title\n=====\nSub\n---\n\ntext\n", ["Title", "Sub"]),
        ("=========\n  Inset\n=========\n\ntext\n", ["Inset"]),
        ("para\n\n-----\n\npara\n", []),  # a transition
        ("- item\n\n  Title\n  -----\n", []),  # indented: no section there
        ("Example::\n\n    Title\n    -----\n\ntext\n", []),  # a literal block
        (".. a comment\n   Title\n   -----\n", []),
        (".. code-block:: rst\n\n   Title\n   =====\n\nReal\n====\n", ["Real"]),
        ("=====  =====\nA      B\n=====  =====\n", []),  # a simple table
        ("Args\n----\nx : int\n    the x\nReturns\n-------\nint\n", ["Args", "Returns"]),
        ("2024\n====\n\nt\n", ["2024"]),  # its id is section-1: docutils' own for no id
    ],
)
def test_the_rules_of_a_title_are_docutils_own(text: str, titles: list[str]) -> None:
    expected, _ = docutils_sections(text)
    assert [t for t, _ in expected] == titles  # the case says what docutils does
    assert [(h.text, h.slug) for h in ours(text)] == [(t, ids[0]) for t, ids in expected]


def test_levels_follow_the_order_styles_first_appear() -> None:
    text = "T\n=\n\nA\n-\n\nB\n~\n\nC\n-\n\nD\n~\n\n=====\nE\n=====\n"
    levels = [(h.text, h.level, h.line, h.end_line) for h in ours(text)]
    assert levels == [
        ("T", 1, 1, 18),
        ("A", 2, 4, 9),
        ("B", 3, 7, 9),
        ("C", 2, 10, 18),
        ("D", 3, 13, 18),
        ("E", 4, 16, 18),  # a new style (overlined =) is a new level, under D
    ]


def test_title_text_drops_inline_markup_as_docutils_shows_it() -> None:
    raw = "``SSL_CERT_FILE`` *em* **st** `link <http://x>`_ \\*esc"
    expected, _ = docutils_sections(f"{raw}\n{'=' * len(raw)}\n")
    assert title_text(raw) == expected[0][0] == "SSL_CERT_FILE em st link *esc"
    assert title_text(":ref:`Payments <payments-api>` and :class:`~shop.Refund`") == (
        "Payments and Refund"  # roles show their title, or their target's last part
    )


@pytest.fixture
def sphinx(tmp_path: Path) -> Path:
    """The project in a workspace, with a card citing one of its sections."""
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / ".cuedeck" / "cards" / "refund.md").write_text(CARD, encoding="utf-8")
    return root


def test_references_are_those_sphinx_follows(sphinx: Path) -> None:
    workspace = open_workspace(sphinx)

    def found(path: str) -> list[tuple[str, str, str | None, int]]:
        document = workspace.document(f"{SOURCE}/{path}")
        return [(r.kind, r.target, r.anchor, r.line) for r in document.references]

    assert found("index.rst") == [
        ("link", f"{SOURCE}/install.rst", None, 8),  # :doc:`install`
        ("label", "refund-policy", None, 8),  # :ref:
        ("link", f"{SOURCE}/api/payments.rst", None, 9),
        ("link", f"{SOURCE}/install.rst", None, 15),  # the toctree's entries
        ("link", f"{SOURCE}/api/payments.rst", None, 16),
        ("link", f"{SOURCE}/changelog.rst", None, 17),  # Changelog <changelog>
        ("link", f"{SOURCE}/install.rst", "requirements", 22),  # a link to its page
    ]
    assert found("install.rst") == [
        ("include", f"{SOURCE}/_snippets/warning.rst", None, 4),
        ("include", "setup.cfg", "L4-L6", 18),  # :lines: 4-6
        ("include", "src/shop/refunds.py", "RefundPolicy.window", 37),  # :pyobject:
        ("link", f"{SOURCE}/api/payments.rst", "Settlement records", 44),  # autosectionlabel
    ]
    assert found("api/payments.rst") == [
        ("link", f"{SOURCE}/install.rst", None, 7),  # :doc:`/install`: from the source folder
        ("label", "refund-policy", None, 23),
        ("label", "no-such-label", None, 24),
    ]  # nothing from the code-block or the doctest


def test_labels_resolve_across_the_project_and_unknown_ones_are_warnings(
    sphinx: Path,
) -> None:
    workspace = open_workspace(sphinx)
    graph = workspace.graph
    # The label's id is taken first: the title's own id is then x-1, as docutils makes it.
    assert graph.labels["refund-policy"] == (f"{SOURCE}/install.rst", "refund-policy-1")
    assert graph.labels["payments-api"] == (f"{SOURCE}/api/payments.rst", "payments-api-1")
    assert graph.labels["home"] == (f"{SOURCE}/index.rst", "shop-user-guide")
    links = graph.see_also(f"{SOURCE}/index.rst")
    assert (f"{SOURCE}/install.rst", "refund-policy-1") in [(x.target, x.anchor) for x in links]
    (problem,) = [p for p in graph.problems if p.path and p.path.endswith("payments.rst")]
    assert (problem.severity, problem.code, problem.line) == ("warning", 1001, 24)
    assert "'no-such-label', which no reStructuredText file defines" in problem.message


def test_read_doc_reads_a_section_by_its_label_or_title(sphinx: Path) -> None:
    workspace = open_workspace(sphinx)
    for anchor in ("refund-policy", "Refund policy", "refund-policy-1"):
        page = read_doc(workspace, f"{SOURCE}/install.rst", anchor=anchor)
        assert page["content"].startswith("Refund policy\n-------------\n\nRefunds are"), anchor
        assert "Troubleshooting **refunds**" in page["content"]


def test_a_sphinx_section_is_cited_in_a_scene_with_the_lines_it_includes(sphinx: Path) -> None:
    workspace = open_workspace(sphinx)
    scene = build_scene(workspace, "refund", token_limit=4000)
    candidates = scene.manifest["candidates"]
    rows = {c["path"] + (f"#{c['anchor']}" if c["anchor"] else ""): c for c in candidates}
    section = rows[f"{SOURCE}/install.rst#refund-policy-1"]  # named by its label
    assert (section["priority"], section["placed"]) == (50, "section")
    assert "```rst\nRefund policy\n-------------\n\nRefunds are settled by the nightly" in (
        scene.text
    )
    assert "Troubleshooting **refunds**" in scene.text  # its subsection goes with it
    assert "Getting help" not in scene.text  # another file's section, not cited
    # setup.cfg: no parser claims it; cited by its lines, it is indexed as plain text.
    assert rows["setup.cfg#L4-L6"]["placed"] == "section"
    assert "```text\n[settle]\nhour = 2\nbatch = 500\n```" in scene.text
    assert "setup.cfg" not in workspace.index.summary()["no_parser"]


@needs("cuedeck_search")  # the budget is counted with its tokenizer
def test_an_rst_document_too_large_is_outlined_from_its_headings(sphinx: Path) -> None:
    card = sphinx / ".cuedeck" / "cards" / "refund.md"
    card.write_text(CARD.replace("#refund-policy", ""), encoding="utf-8")
    workspace = open_workspace(sphinx)
    whole = build_scene(workspace, "refund", token_limit=8000)
    row = next(c for c in whole.manifest["candidates"] if c["path"] == f"{SOURCE}/install.rst")
    assert row["placed"] == "whole"
    others = sum(c["tokens"] for c in whole.manifest["candidates"] if c["role"] != "card")
    limit = whole.tokens - others + 260  # room for its outline, not for it
    tight = build_scene(workspace, "refund", token_limit=limit)
    row = next(c for c in tight.manifest["candidates"] if c["path"] == f"{SOURCE}/install.rst")
    assert row["placed"] == "outline"
    block = tight.text.split(f"## {SOURCE}/install.rst · outline", 1)[1].split("```rst\n")[1]
    assert block.startswith("Installing the shop\n===================\n\nRequirements\n---")
    assert "Refund policy\n-------------\nRefunds are settled by the nightly reconciler" in block
    assert "literalinclude" not in block  # a section's first paragraph, not its directives


def test_a_txt_file_written_in_rst_is_read_as_rst(make_workspace: Any) -> None:
    root = make_workspace(
        {"docs/topics/install.txt": "Install\n=======\n\n.. _pip:\n\nWith pip\n--------\n\nx\n"}
    )
    document = open_workspace(root).document("docs/topics/install.txt")
    assert document.language == "rst"
    assert [(h.text, h.slug, h.aliases) for h in document.headings] == [
        ("Install", "install", ()),
        ("With pip", "with-pip", ("pip",)),
    ]


def test_a_doc_target_follows_the_pages_that_come_and_go(make_workspace: Any) -> None:
    """``:doc:`` targets resolved before their page existed (to the first suffix) resolve
    to it once it comes, and back when it goes, through a walk or a watcher's paths;
    ``/name`` starts at the highest folder holding an ``index`` page of any suffix
    (Django's docs are ``.txt``, with no ``conf.py`` the index holds in core alone)."""
    page = "A\n=\n\nSee :doc:`b` and :doc:`/intro`.\n"
    root = make_workspace({"docs/index.txt": "Home\n====\n", "docs/guide/a.rst": page})
    workspace = open_workspace(root)

    def targets() -> list[str]:
        return [r.target for r in workspace.document("docs/guide/a.rst").references]

    assert targets() == ["docs/guide/b.rst", "docs/intro.rst"]  # neither page exists yet
    (root / "docs/guide/b.txt").write_text("B\n=\n", encoding="utf-8")
    (root / "docs/intro.txt").write_text("Intro\n=====\n", encoding="utf-8")
    workspace.refresh()
    assert targets() == ["docs/guide/b.txt", "docs/intro.txt"]
    (root / "docs/intro.txt").unlink()
    workspace.refresh_paths(["docs/intro.txt"])  # as a file watcher reports it
    assert targets() == ["docs/guide/b.txt", "docs/intro.rst"]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="numpy not installed")
def test_numpy_docstrings_have_docutils_own_titles_and_ids() -> None:
    """Every docstring of the installed numpy with a titled section, that docutils parses
    without an error, gives the same titles and ids here."""
    spec = importlib.util.find_spec("numpy")
    assert spec is not None and spec.origin is not None
    compared, differing = 0, []
    for file in sorted(Path(spec.origin).parent.rglob("*.py")):
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                continue
            text = ast.get_docstring(node, clean=True)
            if not text or not any(f"\n{c * 3}" in text for c in "-=~"):
                continue
            expected, errors = docutils_sections(text)
            if errors:
                continue  # docutils itself could not read it (numpydoc extensions)
            compared += 1
            found = [(h.text, h.slug) for h in ours(text)]
            if found != [(t, ids[0]) for t, ids in expected]:
                differing.append(f"{file.name}:{getattr(node, 'name', '')}")
    assert compared > 500
    assert differing == []
