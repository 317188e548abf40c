"""Nothing left out in silence: what the index did not read, counted by why; a reference
to such a file saying so; and a text file no parser reads, cited by its lines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cuedeck import open_workspace
from cuedeck.index.coverage import admitted, judge
from cuedeck.index.walk import walk_files
from cuedeck.scene import build_scene

CARD_HEAD = "---\nid: cite01\ntitle: Cite things\nstatus: active\n---\n"


def _tree(make_workspace: Any, tmp_path: Path) -> Path:
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n", encoding="utf-8")
    root = make_workspace(
        {
            ".gitignore": "tmp/\n*.log\n",
            "README.md": "# Shop\n",
            "docs/guide.rst": "Guide\n=====\n\nText.\n",
            "docs/manual.adoc": "= Manual\n\nText.\n",
            "notes.txt": "First.\n\nSecond.\n",
            "config/app.yaml": "app:\n  name: shop\n  port: 8080\n  debug: false\n",
            "config/extra.yaml": "x: 1\n",
            "data.json": '{"a": 1}\n',
            "Makefile": "all:\n\ttrue\n",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
            "image.md": b"\x00\x01\x02binary",
            "big.md": "# Big\n" + "word " * 400,
            "run.log": "ignored\n",
            "tmp/out.md": "# in an ignored folder\n",
            "node_modules/pkg/README.md": "# in an excluded folder\n",
            ".env": "SECRET_TOKEN=abc\n",
        },
        config="[index]\nmax_file_mb = 0.001\n",
    )
    os.symlink(outside, root / "link.md")
    (root / "shared.md").write_text("# shared\n", encoding="utf-8")
    os.link(root / "shared.md", tmp_path / "elsewhere.md")
    return root


def test_what_was_not_indexed_is_counted_by_why(make_workspace: Any, tmp_path: Path) -> None:
    workspace = open_workspace(_tree(make_workspace, tmp_path))
    workspace.refresh()
    summary = workspace.index.summary()
    assert summary["languages"] == {"asciidoc": 1, "markdown": 1, "plaintext": 1, "rst": 1}
    assert summary["not_indexed"] == {
        "no parser": 7,
        "binary": 1,
        "hard-linked": 1,
        "ignored": 1,
        "outside the workspace": 1,
        "too large": 1,
    }
    # .gitignore, Makefile and .env have no suffix; logo.png is counted unread.
    assert summary["no_parser"] == {"(no suffix)": 3, ".yaml": 2, ".json": 1, ".png": 1}
    assert summary["folders_not_entered"] == {"excluded": 1, "ignored": 1}


def test_one_path_is_judged_as_the_walk_judges_it(make_workspace: Any, tmp_path: Path) -> None:
    """:func:`admitted` (a watcher's report) and :func:`walk_files` apply the same rules:
    every file of the tree is admitted exactly when the walk finds it."""
    root = _tree(make_workspace, tmp_path)
    workspace = open_workspace(root)
    settings, parsers = workspace.config.index, workspace.parsers
    walked = {path for path, _ in walk_files(root, settings, parsers)}
    every = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if (p.is_file() or p.is_symlink()) and ".cuedeck" not in p.parts
    ]
    assert len(every) == 18
    for path in every:
        assert (admitted(root, settings, parsers, path) is not None) == (path in walked), path
    assert judge(root, settings, parsers, "nowhere.md") is None  # no file: nothing to say


def test_a_reference_to_a_file_left_out_says_why(make_workspace: Any, tmp_path: Path) -> None:
    root = _tree(make_workspace, tmp_path)
    cited = [
        "run.log#L1",
        "tmp/out.md",
        "node_modules/pkg/README.md",
        "big.md",
        "image.md",
        "link.md",
        "shared.md",
        ".env#L1",
        "gone.md",
    ]
    body = "\n".join(f"- @{target}" for target in cited)
    (root / ".cuedeck" / "cards" / "cite01.md").write_text(CARD_HEAD + body + "\n")
    workspace = open_workspace(root)
    found = {
        p.message.split(" points at ")[1]: (p.code, p.severity, p.help)
        for p in workspace.graph.problems
        if p.path == ".cuedeck/cards/cite01.md"
    }
    outside = os.path.realpath(tmp_path / "outside.md")
    assert set(found) == {
        "run.log, which is not indexed: a .gitignore ignores it",
        "tmp/out.md, which is not indexed: a .gitignore ignores it",
        "node_modules/pkg/README.md, which is not indexed: [index] include or exclude "
        "leaves it out",
        "big.md, which is not indexed: it was passed over (too large)",
        "image.md, which is not indexed: binary content (NUL bytes or mostly undecodable) "
        "in a text file",
        f"link.md, which is not indexed: a symlink to {outside}, outside the workspace",
        "shared.md, which is not indexed: the file has several hard links, so its content "
        "may be a file outside the workspace",
        ".env, which is not indexed: [files] deny keeps it from every tool",
        "gone.md, which does not exist",
    }
    assert {code for code, _, _ in found.values()} == {1001}
    assert found["run.log, which is not indexed: a .gitignore ignores it"][2] == (
        "remove the .gitignore rule that ignores it, or set [index] gitignore = false"
    )
    scene = build_scene(workspace, "cite01", token_limit=4000)
    assert "SECRET_TOKEN" not in scene.text and "abc" not in scene.text.split("## Manifest")[0]
    assert len(scene.manifest["missing"]) == len(cited)


def test_a_text_file_no_parser_reads_is_cited_by_its_lines(
    make_workspace: Any, tmp_path: Path
) -> None:
    root = _tree(make_workspace, tmp_path)
    card = root / ".cuedeck" / "cards" / "cite01.md"
    card.write_text(CARD_HEAD + "The port: @config/app.yaml#L2-L3; all of @code/data.json.\n")
    workspace = open_workspace(root)
    scene = build_scene(workspace, "cite01", token_limit=4000)
    assert "## config/app.yaml#L2-L3 · L2-L3\n\n```text\n  name: shop\n  port: 8080\n```" in (
        scene.text
    )
    assert '## data.json\n\n```text\n{"a": 1}\n```' in scene.text
    assert workspace.graph.problems == []
    assert workspace.index.language("config/app.yaml") == "text"
    assert workspace.index.summary()["no_parser"] == {"(no suffix)": 3, ".png": 1, ".yaml": 1}
    # Kept in step like any indexed file: an edit is seen, the walk keeps it.
    (root / "config" / "app.yaml").write_text("app:\n  name: shop\n  port: 9090\n")
    workspace.invalidate()
    assert "  port: 9090" in build_scene(workspace, "cite01", token_limit=4000).text
    again = open_workspace(root)
    again.refresh()
    assert "config/app.yaml" in again.index  # a new process: the walk keeps what is indexed
    # No reference includes it any more: it leaves the index.
    card.write_text(CARD_HEAD + "Nothing cited.\n")
    workspace.invalidate()
    workspace.graph  # noqa: B018 (building the graph is what releases it)
    assert "config/app.yaml" not in workspace.index
    assert "data.json" not in workspace.index
    no_parser = {"(no suffix)": 3, ".yaml": 2, ".json": 1, ".png": 1}
    assert workspace.index.summary()["no_parser"] == no_parser


def test_a_file_of_a_kind_now_read_is_cited_as_the_issue_asked(make_workspace: Any) -> None:
    progress = "".join(f"Step {n}\n{'-' * (5 + len(str(n)))}\n\nDone {n}.\n\n" for n in range(9))
    root = make_workspace(
        {
            ".cuedeck/cards/cite01.md": CARD_HEAD.replace(
                "status: active\n", "status: active\nrefs: [docs/source/progress.rst#step-3]\n"
            )
            + "See @code/docs/source/progress.rst#L1-L20 and @docs/source/progress.rst.\n",
            "docs/source/progress.rst": progress,
        }
    )
    workspace = open_workspace(root)
    assert workspace.graph.problems == []
    card = workspace.document(".cuedeck/cards/cite01.md")
    assert [(r.kind, r.target, r.anchor) for r in card.references] == [
        ("frontmatter", "docs/source/progress.rst", "step-3"),
        ("at", "docs/source/progress.rst", "L1-L20"),
        ("at", "docs/source/progress.rst", None),
    ]
    scene = build_scene(workspace, "cite01", token_limit=4000)
    rows = [(c["path"], c["anchor"]) for c in scene.manifest["candidates"]]
    assert ("docs/source/progress.rst", None) in rows  # whole; it holds the line range too
    assert "Done 8." in scene.text
