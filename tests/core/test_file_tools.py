"""File tools on real files: hashes of raw bytes, exact edits, races, and refused paths."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import (
    Conflict,
    CueError,
    EditAmbiguous,
    EditNotFound,
    InvalidInput,
    Protected,
)
from cuedeck.workspace import open_workspace
from cuedeck.writes import sha256_bytes, write_files
from tests.conftest import MakeWorkspace, needs


def _tools(root: Path) -> tuple[Any, dict[str, Any]]:
    workspace = open_workspace(root)
    return workspace, workspace.plugins.tools()


def call(root: Path, name: str, **arguments: Any) -> Any:
    workspace, tools = _tools(root)
    return tools[name].call(workspace, arguments)


@pytest.mark.parametrize(
    "raw",
    [b"one\r\ntwo\r\nthree\r\n", b"\xef\xbb\xbfone\ntwo\nthree\n", b"\xef\xbb\xbfone\r\ntwo\r\n"],
    ids=["crlf", "bom", "bom-crlf"],
)
def test_crlf_and_bom_files_edit_through_the_hash_the_read_returned(
    make_workspace: MakeWorkspace, raw: bytes
) -> None:
    root = make_workspace()
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_bytes(raw)
    read = call(root, "get_file_content", file_path="src/a.txt")
    assert read["content_hash"] == sha256_bytes(raw)  # the raw bytes, not decoded text
    # The agent sends \n where the file has \r\n: the edit keeps the file's endings.
    edited = call(
        root,
        "edit_file",
        file_path="src/a.txt",
        old_string="one\ntwo",
        new_string="ONE\nTWO",
        content_hash=read["content_hash"],
    )
    after = (root / "src" / "a.txt").read_bytes()
    assert after == raw.replace(b"one", b"ONE").replace(b"two", b"TWO")
    assert edited["new_content_hash"] == sha256_bytes(after)
    assert edited["changes_made"] == 1


def test_a_stale_hash_is_1005_with_the_current_hash(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"notes.txt": "alpha\n"})
    old = call(root, "get_file_content", file_path="notes.txt")["content_hash"]
    (root / "notes.txt").write_text("alpha beta\n")
    with pytest.raises(Conflict) as stale:
        call(root, "edit_file", file_path="notes.txt", old_string="alpha", new_string="x",
             content_hash=old)  # fmt: skip
    assert stale.value.code == 1005
    assert stale.value.data["current_content_hash"] == sha256_bytes(b"alpha beta\n")
    assert (root / "notes.txt").read_text() == "alpha beta\n"


def test_not_found_several_matches_and_replace_all(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\nx = 1\ny = 2\n"})
    digest = call(root, "get_file_content", file_path="a.py")["content_hash"]
    with pytest.raises(EditNotFound) as missing:
        call(root, "edit_file", file_path="a.py", old_string="z = 3", new_string="",
             content_hash=digest)  # fmt: skip
    with pytest.raises(EditAmbiguous) as several:
        call(root, "edit_file", file_path="a.py", old_string="x = 1", new_string="x = 9",
             content_hash=digest)  # fmt: skip
    assert (missing.value.code, several.value.code) == (1020, 1021)
    assert several.value.data["occurrences"] == 2
    done = call(root, "edit_file", file_path="a.py", old_string="x = 1", new_string="x = 9",
                content_hash=digest, replace_all=True)  # fmt: skip
    assert done["changes_made"] == 2
    assert (root / "a.py").read_text() == "x = 9\nx = 9\ny = 2\n"


def test_two_writers_with_the_same_hash_exactly_one_wins(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"shared.txt": "count: 0\n"})
    digest = call(root, "get_file_content", file_path="shared.txt")["content_hash"]
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def writer(value: str) -> None:
        workspace, tools = _tools(root)
        start.wait()
        try:
            tools["edit_file"].call(
                workspace,
                {"file_path": "shared.txt", "old_string": "count: 0",
                 "new_string": f"count: {value}", "content_hash": digest},
            )  # fmt: skip
            outcomes.append("won")
        except Conflict:
            outcomes.append("refused")

    threads = [threading.Thread(target=writer, args=(v,)) for v in ("1", "2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused", "won"]
    assert (root / "shared.txt").read_text() in ("count: 1\n", "count: 2\n")


@pytest.mark.parametrize(
    ("path", "refusal"),
    [("../outside.txt", InvalidInput), ("/etc/passwd", InvalidInput),
     (".git/config", Protected), ("src/.git/HEAD", Protected), (".env", InvalidInput),
     ("certs/server.pem", InvalidInput), ("deploy/id_rsa", InvalidInput),
     (".cuedeck/.cache/index.sqlite3", Protected), ("link-out/secret.txt", InvalidInput),
     ("a\x00b.txt", InvalidInput)],
)  # fmt: skip
def test_refused_paths(
    make_workspace: MakeWorkspace, tmp_path: Path, path: str, refusal: type[CueError]
) -> None:
    root = make_workspace({".env": "KEY=1\n", "certs/server.pem": "x\n", ".github/ci.yml": "on\n"})
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "link-out").symlink_to(outside, target_is_directory=True)
    for tool, extra in (
        ("get_file_content", {}),
        ("create_file", {"content": "x"}),
        ("delete_file", {}),
    ):
        with pytest.raises(refusal) as refused:
            call(root, tool, file_path=path, **extra)
        assert refused.value.data["field"] == "file_path", tool
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_github_is_not_git(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".github/workflows/ci.yml": "on: push\n"})
    assert call(root, "get_file_content", file_path=".github/workflows/ci.yml")["content"] == (
        "on: push\n"
    )


def test_a_masked_placeholder_in_old_string_is_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"cfg.txt": "key = sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQau\n"})
    digest = call(root, "get_file_content", file_path="cfg.txt")["content_hash"]
    with pytest.raises(InvalidInput) as refused:
        call(root, "edit_file", file_path="cfg.txt", old_string="[REDACTED:stripe-secret-key#1]",
             new_string="x", content_hash=digest)  # fmt: skip
    assert "replies are masked, files are not" in refused.value.message


def test_create_refuses_an_existing_file_and_delete_checks_the_hash(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"keep.txt": "keep\n"})
    created = call(root, "create_file", file_path="new/dir/file.md", content="# New\n")
    assert created["content_hash"] == sha256_bytes(b"# New\n")
    assert ".cuedeck/docs" not in created["file_path"]
    assert "new/dir/file.md" in open_workspace(root).documents  # the index notices
    with pytest.raises(Conflict) as exists:
        call(root, "create_file", file_path="keep.txt", content="overwrite\n")
    assert exists.value.data["current_content_hash"] == sha256_bytes(b"keep\n")
    with pytest.raises(Conflict):
        call(root, "delete_file", file_path="keep.txt", content_hash="0" * 64)
    assert (root / "keep.txt").exists()
    digest = sha256_bytes(b"keep\n")
    asked = call(root, "delete_file", file_path="keep.txt", content_hash=digest)
    assert (
        asked["requires_confirmation"] and "keep.txt (5 bytes, 1 lines)" in asked["warning_message"]
    )
    assert (root / "keep.txt").exists()
    token = asked["confirmation_token"]
    call(root, "delete_file", file_path="keep.txt", content_hash=digest, confirmed_token=token)
    assert not (root / "keep.txt").exists()
    assert (open_workspace(root).plugins).tools()["delete_file"].destructive


@needs("cuedeck_search")  # the budget is counted with its tokenizer
def test_pages_stop_at_the_token_budget_on_whole_lines(make_workspace: MakeWorkspace) -> None:
    text = "".join(f"line {n} with a few words in it\n" for n in range(1, 401))
    root = make_workspace({"big.txt": text}, config="[files]\nmax_tokens = 200\n")
    first = call(root, "get_file_content", file_path="big.txt")
    meta = first["metadata"]
    assert meta["truncated"] and meta["requires_pagination"] and meta["has_more"]
    assert meta["estimated_tokens"] <= 200
    assert meta["truncated_at_line"] == meta["returned_lines"]
    assert first["content"].endswith("\n") and first["content"].startswith("line 1 ")
    pages, offset = [first["content"]], meta["returned_lines"] + 1
    while True:
        page = call(root, "get_file_content", file_path="big.txt", offset=offset)
        pages.append(page["content"])
        if not page["metadata"]["requires_pagination"]:
            break
        assert page["metadata"]["pagination_hint"].endswith(
            f"offset={offset + page['metadata']['returned_lines']}"
        )
        offset += page["metadata"]["returned_lines"]
    assert "".join(pages) == text  # whole lines, nothing lost or repeated
    with pytest.raises(CueError) as past:
        call(root, "get_file_content", file_path="big.txt", offset=401)
    assert past.value.code == 1004


@pytest.mark.parametrize("case", ["long-name", "link-loop", "folder", "pipe"])
def test_nameable_causes_are_named_in_every_file_tool(
    make_workspace: MakeWorkspace, case: str
) -> None:
    root = make_workspace({"dir/inside.txt": "x\n"})
    (root / "loop-a").symlink_to("loop-b")
    (root / "loop-b").symlink_to("loop-a")
    os.mkfifo(root / "pipe")  # reading a named pipe would wait for ever
    path = {"long-name": "n" * 300 + ".txt", "link-loop": "loop-a", "folder": "dir",
            "pipe": "pipe"}[case]  # fmt: skip
    why = {
        "long-name": "longer than the file system allows",
        "link-loop": "loop of symbolic links",
        "folder": "folder",
        "pipe": "not a regular file",
    }[case]
    for tool, arguments in (
        ("get_file_content", {}),
        ("create_file", {"content": "x"}),
        ("edit_file", {"old_string": "x", "new_string": "y", "content_hash": "0" * 64}),
        ("delete_file", {}),
    ):
        with pytest.raises(InvalidInput) as refused:
            call(root, tool, file_path=path, **arguments)
        assert why in refused.value.message, (tool, refused.value.message)
        assert refused.value.data["field"] == "file_path"
    assert (root / "dir" / "inside.txt").read_text() == "x\n"


def test_a_name_at_the_limit_still_has_room_for_its_temporary_file(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace()
    name = "n" * 251 + ".txt"  # 255 bytes: the longest name most file systems allow
    assert call(root, "create_file", file_path=name, content="hi\n")["size_bytes"] == 3
    assert (root / name).read_text() == "hi\n"


def test_a_batch_write_is_whole_files_in_one_folder(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    files = [(f"{n}.md", f"file {n}\n".encode()) for n in range(300)]  # two lock chunks
    write_files(tmp_path, "out", files)
    assert sorted(os.listdir(folder)) == sorted(name for name, _ in files)
    assert (folder / "299.md").read_bytes() == b"file 299\n"
    assert (folder / "0.md").stat().st_mode & 0o777 == 0o644
    with pytest.raises(InvalidInput):
        write_files(tmp_path, "out", [("../escaped.md", b"x")])
    assert not (tmp_path / "escaped.md").exists()
    assert sorted(os.listdir(folder)) == sorted(name for name, _ in files)  # no temp left
