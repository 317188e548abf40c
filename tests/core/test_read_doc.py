"""read_doc: whole files, sections, pages that rebuild the file byte for byte, refusals."""

from __future__ import annotations

import hashlib
import itertools
import os
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.errors import FileNotFound, InvalidInput, Protected, TokenLimitExceeded
from cuedeck.serving.read_doc import read_doc
from cuedeck.serving.reply import reply_size
from cuedeck.workspace import Workspace, open_workspace

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import MakeWorkspace

GUIDE = """---
title: Guide
---
# Guide

Intro line.

## Login Flow

Step one.
Step two.

## Error Codes

- 1001 not found
"""


def _open(root: Path) -> Workspace:
    return open_workspace(root)


def _pages(workspace: Workspace, **args: Any) -> list[dict[str, Any]]:
    pages = []
    offset = 1
    while True:
        page = read_doc(workspace, offset=offset, **args)
        pages.append(page)
        if not page["has_more"]:
            return pages
        assert page["next_offset"] is not None
        assert page["next_offset"] > offset  # always progress
        offset = page["next_offset"]


def test_whole_file_with_hash_tokens_and_cached(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/docs/guide.md": GUIDE})
    workspace = _open(root)
    page = read_doc(workspace, ".cuedeck/docs/guide.md")
    data = (root / ".cuedeck/docs/guide.md").read_bytes()
    assert page["content"] == GUIDE
    assert page["hash"] == hashlib.sha256(data).hexdigest()
    assert page["tokens"] == workspace.count_tokens(GUIDE)
    assert page["cached"] is True
    assert page["total_lines"] == GUIDE.count("\n")
    assert page["line_range"] == {"start": 1, "end": GUIDE.count("\n")}
    assert (page["has_more"], page["truncated"], page["next_offset"], page["hint"]) == (
        False,
        False,
        None,
        None,
    )


def test_short_docs_path_finds_the_cuedeck_doc(make_workspace: MakeWorkspace) -> None:
    workspace = _open(make_workspace({".cuedeck/docs/guide.md": GUIDE}))
    assert read_doc(workspace, "docs/guide.md")["path"] == ".cuedeck/docs/guide.md"


@pytest.mark.parametrize("anchor", ["Login Flow", "login flow", "login-flow", " LOGIN-FLOW "])
def test_anchor_by_text_or_slug_returns_the_section(
    make_workspace: MakeWorkspace, anchor: str
) -> None:
    workspace = _open(make_workspace({"guide.md": GUIDE}))
    page = read_doc(workspace, "guide.md", anchor=anchor)
    assert page["anchor"] == "Login Flow"
    assert page["content"] == "## Login Flow\n\nStep one.\nStep two.\n\n"
    assert page["line_range"] == {"start": 8, "end": 12}


def test_missing_anchor_is_1001_with_did_you_mean(make_workspace: MakeWorkspace) -> None:
    workspace = _open(make_workspace({"guide.md": GUIDE}))
    with pytest.raises(FileNotFound) as caught:
        read_doc(workspace, "guide.md", anchor="Error Code")
    assert caught.value.code == 1001
    assert caught.value.data["suggestion"] == "Did you mean 'Error Codes'?"


def test_missing_file_is_1001_with_did_you_mean(make_workspace: MakeWorkspace) -> None:
    workspace = _open(make_workspace({".cuedeck/docs/auth.md": "# Auth\n"}))
    with pytest.raises(FileNotFound) as caught:
        read_doc(workspace, ".cuedeck/docs/auht.md")
    assert caught.value.data["suggestion"] == "Did you mean '.cuedeck/docs/auth.md'?"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside.md", "leaves the workspace"),
        ("docs/../../outside.md", "leaves the workspace"),
        ("/etc/passwd.md", "workspace-relative"),
        ("C:/x.md", "workspace-relative"),
        (".git/HEAD.md", ".git"),
        ("notes.org", "markdown"),
    ],
)
def test_refused_paths_are_1004_naming_path(
    make_workspace: MakeWorkspace, path: str, reason: str
) -> None:
    workspace = _open(make_workspace({"notes.org": "x", "guide.md": GUIDE}))
    refusal = Protected if reason == ".git" else InvalidInput  # 1013: a protected path
    with pytest.raises(refusal, match=reason) as caught:
        read_doc(workspace, path)
    assert caught.value.data["field"] == "path"


def test_symlink_leaving_the_workspace_is_refused(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n")
    root = make_workspace({"guide.md": GUIDE})
    os.symlink(secret, root / "link.md")
    with pytest.raises(InvalidInput, match="outside the workspace"):
        read_doc(_open(root), "link.md")


@pytest.mark.parametrize(
    "data",
    [
        GUIDE.encode(),
        GUIDE.replace("\n", "\r\n").encode(),
        b"\xef\xbb\xbf" + GUIDE.encode(),  # a BOM is kept, so the bytes come back
        b"a\rb\rc\r" + b"word " * 60 + b"\nlast line without ending",
        ("# Ünïcödé\n\n" + "línea con acentos y emoji \U0001f600\n" * 400).encode(),
    ],
    ids=["lf", "crlf", "bom", "cr-and-longer-line", "unicode"],
)
@pytest.mark.parametrize("budget", [200, 300, 1000])
def test_pages_rebuild_the_file_byte_for_byte(
    make_workspace: MakeWorkspace, data: bytes, budget: int
) -> None:
    workspace = _open(make_workspace({"doc.md": data}))
    pages = _pages(workspace, file_path="doc.md", max_tokens=budget)
    assert "".join(p["content"] for p in pages).encode() == data
    total = len(data.splitlines())
    assert all(p["total_lines"] == total for p in pages)
    assert all(p["hash"] == hashlib.sha256(data).hexdigest() for p in pages)
    ranges = [p["line_range"] for p in pages]
    assert ranges[0]["start"] == 1
    assert ranges[-1]["end"] == total
    assert all(a["end"] + 1 == b["start"] for a, b in itertools.pairwise(ranges))
    for page in pages:  # the whole reply, in either form, fits
        assert reply_size(page, workspace.count_tokens) <= budget


def test_a_line_longer_than_the_budget_is_cut_alone_on_its_page(
    make_workspace: MakeWorkspace,
) -> None:
    long_line = "word " * 2000 + "\n"
    workspace = _open(make_workspace({"doc.md": "short\n" + long_line + "tail\n"}))
    first = read_doc(workspace, "doc.md", max_tokens=300)
    assert first["content"] == "short\n"
    assert first["truncated"]
    assert first["has_more"]
    assert first["next_offset"] == 2  # the 1-based line the next page starts at
    second = read_doc(workspace, "doc.md", offset=2, max_tokens=300)
    assert long_line.startswith(second["content"]) and len(second["content"]) > 500
    assert second["line_range"] == {"start": 2, "end": 2}
    assert second["truncated"]
    assert "over max_tokens=300: only its start is here" in (second["hint"] or "")
    assert second["next_offset"] == 3
    assert reply_size(second, workspace.count_tokens) <= 300
    assert read_doc(workspace, "doc.md", offset=3, max_tokens=300)["content"] == "tail\n"


def test_a_budget_too_small_for_the_reply_is_refused_with_what_it_needs(
    make_workspace: MakeWorkspace,
) -> None:
    workspace = _open(make_workspace({"doc.md": GUIDE}))
    with pytest.raises(TokenLimitExceeded) as refused:
        read_doc(workspace, "doc.md", max_tokens=20)
    needed = refused.value.data["current_size"]
    assert refused.value.data["limit"] == 20 and needed > 20
    page = read_doc(workspace, "doc.md", max_tokens=needed + 10)
    assert reply_size(page, workspace.count_tokens) <= needed + 10


def test_default_budget_comes_from_config(make_workspace: MakeWorkspace) -> None:
    text = "".join(f"line number {n}\n" for n in range(400))
    root = make_workspace({"doc.md": text}, config="[mcp]\nread_doc_max_tokens = 200\n")
    workspace = _open(root)
    page = read_doc(workspace, "doc.md")
    assert page["has_more"]
    assert 100 < reply_size(page, workspace.count_tokens) <= 200


def test_registered_with_schema_flags_and_1004_validation(make_workspace: MakeWorkspace) -> None:
    workspace = _open(make_workspace({"guide.md": GUIDE}))
    tool = workspace.plugins.tools()["read_doc"]
    assert (tool.category, tool.read_only, tool.destructive, tool.idempotent) == (
        "docs",
        True,
        False,
        True,
    )
    schema = tool.input_schema()
    assert schema["required"] == ["file_path"]
    assert schema["properties"]["file_path"]["pattern"] == r"^[^/\\]"  # any indexed file
    assert tool.output_schema()["properties"]["line_range"]
    with pytest.raises(InvalidInput) as caught:
        tool.call(workspace, {"file_path": "guide.md", "max_tokens": 0})
    assert caught.value.data["field"] == "max_tokens"
    assert tool.call(workspace, {"file_path": "guide.md"})["content"] == GUIDE


def test_read_doc_and_get_file_content_speak_one_convention(make_workspace: MakeWorkspace) -> None:
    """``file_path`` and 1-based ``offset`` for both; ``path`` (and read_doc's old 0) still
    work for callers written against the old read_doc."""
    text = "".join(f"line {n}\n" for n in range(1, 21))
    workspace = _open(make_workspace({"doc.md": text}))
    tools = workspace.plugins.tools()
    read, content = tools["read_doc"], tools["get_file_content"]
    for tool in (read, content):
        assert tool.input_schema()["required"] == ["file_path"]
        assert "path" not in tool.input_schema()["properties"]
    page = read.call(workspace, {"file_path": "doc.md", "offset": 6, "limit": 4})
    file_page = content.call(workspace, {"file_path": "doc.md", "offset": 6, "limit": 4})
    assert page["content"] == file_page["content"] == "line 6\nline 7\nline 8\nline 9\n"
    assert page["next_offset"] == 10
    assert file_page["metadata"]["pagination_hint"].endswith("offset=10")
    # Old callers: `path`, and read_doc's offset 0 for the first page.
    assert read.call(workspace, {"path": "doc.md", "offset": 0})["content"] == text
    assert read.call(workspace, {"path": "doc.md"}) == read.call(workspace, {"file_path": "doc.md"})
    assert content.call(workspace, {"path": "doc.md"})["content"] == text
    with pytest.raises(InvalidInput) as caught:
        read.call(workspace, {"path": 7})
    assert caught.value.data["field"] == "path"
