"""The code navigation tools through the registered tool objects (validation included):
errors, bounds and paging; regex_search cannot hang and never leaves the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from cuedeck.errors import CueError, FileNotFound, InvalidInput, Protected, TokenLimitExceeded
from cuedeck.serving.reply import reply_size


def caller(root: Path) -> Any:
    workspace = open_workspace(root)
    tools = workspace.plugins.tools()

    def call(name: str, **arguments: Any) -> Any:
        return tools[name].call(workspace, arguments)

    call.workspace = workspace  # type: ignore[attr-defined]
    return call


@pytest.fixture
def call(code_root: Path) -> Any:
    (code_root / ".gitignore").write_text("build/\n*.log\n")
    (code_root / "build").mkdir()
    (code_root / "build" / "out.py").write_text("def built(): pass\n")
    (code_root / "debug.log").write_text("Client.send failed\n")
    (code_root / ".env").write_text("TOKEN=Client.send-secret\n")
    return caller(code_root)


def test_search_code_finds_symbols_with_filters_and_pages(call: Any) -> None:
    reply = call("search_code", query="send request retries", mode="keyword", limit=2)
    best = reply["results"][0]
    assert (best["path"], best["symbol"], best["kind"], best["line"], best["end_line"]) == (
        "client.py", "Client.send", "method", 34, 40,
    )  # fmt: skip
    assert best["signature"].startswith("def send(self, method: str")
    assert best["doc"] == "Send one request; retry up to ``retries`` times."
    assert reply["has_more"] and reply["next_offset"] == 2
    second = call("search_code", query="send request retries", mode="keyword", limit=2, offset=2)
    names = {(h["path"], h["symbol"]) for h in reply["results"] + second["results"]}
    assert len(names) == len(reply["results"]) + len(second["results"])  # no symbol twice
    go = call("search_code", query="serve http item count", mode="keyword", language="go")
    assert {h["language"] for h in go["results"]} == {"go"}
    assert go["results"][0]["symbol"] == "Server.ServeHTTP"
    scoped = call("search_code", query="helper", mode="keyword", path="util/**")
    assert [h["path"] for h in scoped["results"]] == ["util/helpers.ts"]
    structs = call("search_code", query="cache", mode="keyword", kind="struct")
    assert [(h["symbol"], h["kind"]) for h in structs["results"]] == [("Cache", "struct")]
    nothing = call("search_code", query="send", language="cobol")
    assert nothing["results"] == [] and "No indexed code" in nothing["hint"]
    with pytest.raises(InvalidInput):
        call("search_code", query="x", mode="fuzzy")
    with pytest.raises(InvalidInput):
        call("search_code", query="   ")


def test_regex_search_with_context_paging_and_rules(call: Any) -> None:
    reply = call("regex_search", pattern=r"def \w+\(self", context_lines=1, max_matches=2)
    first = reply["matches"][0]
    assert (first["path"], first["line"], first["column"]) == ("client.py", 18, 5)
    assert first["text"] == "    def json(self) -> object:"
    assert first["before"] == [""] and first["after"] == ["        return json.loads(self.body)"]
    assert (reply["returned"], reply["has_more"], reply["next_offset"]) == (2, True, 2)
    rest = call("regex_search", pattern=r"def \w+\(self", offset=2, max_matches=100)
    assert rest["has_more"] is False
    assert reply["matches"][1]["line"] < rest["matches"][0]["line"] or (
        reply["matches"][1]["path"] != rest["matches"][0]["path"]
    )
    every = call("regex_search", pattern="Client.send")
    seen = {m["path"] for m in every["matches"]}
    assert "debug.log" not in seen  # .gitignore
    assert ".env" not in seen  # [files] deny
    assert "build/out.py" not in seen
    only = call("regex_search", pattern="func", globs=["*.go"], case_sensitive=False)
    assert {m["path"] for m in only["matches"]} == {"server.go", "store/store.go"}
    small = call("regex_search", pattern=".", max_tokens=300)
    assert small["truncated"] and small["has_more"] and small["returned"] > 1
    assert reply_size(small, call.workspace.count_tokens) <= 300  # the whole reply
    with pytest.raises(InvalidInput, match="not a valid regular expression"):
        call("regex_search", pattern="def (")
    with pytest.raises(FileNotFound):
        call("regex_search", pattern="x", path="nowhere")


def test_a_catastrophic_pattern_is_stopped(code_root: Path) -> None:
    (code_root / "evil.txt").write_text("a" * 50_000 + "!\n")
    call = caller(code_root)
    with pytest.raises(CueError, match=r"stopped after 0\.5s") as caught:
        call("regex_search", pattern=r"(a|aa)+$", timeout_seconds=0.5)
    assert caught.value.code == 1101
    assert caught.value.data["timeout_seconds"] == 0.5


def test_regex_search_never_follows_links_out_or_into_git(code_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("LEAKED_MARKER\n")
    (code_root / ".git").mkdir()
    (code_root / ".git" / "config").write_text("LEAKED_MARKER\n")
    os.symlink(outside / "secret.txt", code_root / "link_out.txt")
    os.symlink(outside, code_root / "dir_out")
    os.symlink(code_root / ".git" / "config", code_root / "link_git.txt")
    os.symlink(code_root / ".git", code_root / "git_dir")
    (code_root / "inside.txt").write_text("LEAKED_MARKER is fine here\n")
    os.symlink(code_root / "inside.txt", code_root / "link_in.txt")
    call = caller(code_root)
    found = call("regex_search", pattern="LEAKED_MARKER")
    assert sorted(m["path"] for m in found["matches"]) == ["inside.txt", "link_in.txt"]
    with pytest.raises(Protected):
        call("regex_search", pattern="x", path=".git")
    with pytest.raises(InvalidInput):
        call("regex_search", pattern="x", path="../outside")
    listed = call("list_files", limit=500)["files"]
    assert not any(f["path"].startswith((".git", "dir_out", "git_dir", "link_out")) for f in listed)


def test_list_files_by_glob_language_and_size(call: Any, code_root: Path) -> None:
    import hashlib

    py = call("list_files", globs=["*.py"])
    assert [f["path"] for f in py["files"]] == ["client.py", "transport.py"]
    client = py["files"][0]
    assert client["language"] == "python" and client["indexed"] and client["tokens"] > 0
    assert client["hash"] == hashlib.sha256((code_root / "client.py").read_bytes()).hexdigest()
    notes = call("list_files", globs=[".gitignore"])["files"][0]  # not indexed: read now
    assert (notes["indexed"], notes["language"], notes["tokens"]) == (False, None, 5)
    go = call("list_files", language="go")
    assert [f["path"] for f in go["files"]] == ["server.go", "store/store.go"]
    paged = call("list_files", limit=3)
    assert (paged["returned"], paged["has_more"], paged["next_offset"]) == (3, True, 3)
    assert call("list_files", max_size=40)["files"] == [
        f for f in call("list_files", limit=500)["files"] if f["size"] <= 40
    ]
    with pytest.raises(InvalidInput):
        call("list_files", path="client.py")


def test_browse_directory_and_tree(call: Any) -> None:
    top = call("browse_directory")
    names = [e["name"] for e in top["entries"]]
    assert names[:4] == [".cuedeck/", "com/", "store/", "util/"]  # folders first
    com = next(e for e in top["entries"] if e["name"] == "com/")
    assert (com["type"], com["files"]) == ("directory", 2)
    client = next(e for e in top["entries"] if e["name"] == "client.py")
    assert client["language"] == "python" and client["tokens"] > 0
    assert "debug.log" not in names and "build/" not in names and ".env" not in names
    page = call("browse_directory", limit=2, offset=1)
    assert [e["name"] for e in page["entries"]] == names[1:3] and page["has_more"]
    tree = call("directory_tree", depth=2)
    assert "  com/ (2 files)" in tree["tree"].splitlines()
    assert "    acme/ (2 files)" in tree["tree"].splitlines()
    assert "Inventory.java" not in tree["tree"]  # below depth 2
    small = call("directory_tree", max_tokens=150)
    assert small["truncated"] and small["hint"]
    assert reply_size(small, call.workspace.count_tokens) <= 150  # the whole reply
    with pytest.raises(TokenLimitExceeded) as tiny:
        call("directory_tree", max_tokens=50)
    assert tiny.value.data["current_size"] > 50
    with pytest.raises(FileNotFound):
        call("browse_directory", path="missing")


def test_the_boards_search_finds_code(code_root: Path) -> None:
    pytest.importorskip("cuedeck_cli")
    from cuedeck_cli.board.api import BoardApi

    reply = BoardApi(open_workspace(code_root)).search("handle_request")
    best = reply["results"][0]
    assert (best["path"], best["line"], best["anchors"][0]) == ("client.py", 43, "handle_request")


@pytest.mark.slow  # embeds the sample files with the real model
def test_search_code_says_which_side_answered(code_root: Path) -> None:
    workspace = open_workspace(code_root)
    engine = workspace.service("search")
    engine.background = False  # vectors come only from embed_all below
    tool = workspace.plugins.tools()["search_code"]

    def call(**arguments: Any) -> Any:
        return tool.call(workspace, {"query": "send request retries", **arguments})

    keyword = call(mode="keyword")
    assert (keyword["answered_by"], keyword["semantic_coverage"]) == ("keyword", None)
    # No vector yet: hybrid and semantic answer by keyword, and say so, as read_context does.
    for mode in ("hybrid", "semantic"):
        early = call(mode=mode)
        assert (early["answered_by"], early["semantic_coverage"]) == ("keyword", 0.0)
        assert [h["symbol"] for h in early["results"]] == [h["symbol"] for h in keyword["results"]]
        assert early["hint"].startswith("Ranked by keyword: 0% of sections have a vector")
        assert all(h["semantic_score"] is None for h in early["results"])
    engine.embed_all()
    for mode in ("hybrid", "semantic"):
        late = call(mode=mode)
        assert (late["answered_by"], late["semantic_coverage"], late["hint"]) == (mode, 1.0, None)
        assert late["results"][0]["symbol"] == "Client.send"
        assert all(h["semantic_score"] is not None for h in late["results"])
