"""The quick keyword path of `cue search`: the engine's answer, without numpy."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuedeck import open_workspace
from cuedeck.index.parsed import DEFER_COUNTS
from cuedeck.layout import INDEX_DB
from cuedeck.workspace import Workspace
from cuedeck_cli.app import make_cli
from cuedeck_search.bm25 import POSTINGS_FILE
from cuedeck_search.quick import keyword_search
from cuedeck_search.saved_changes import CHANGES_FILE
from tests.search.test_golden import GOLDEN, QUERIES

WORDS = [str(q["query"]) for q in QUERIES] + ["token", "webhook", "signing key rotation"]


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    root = tmp_path / "golden"
    shutil.copytree(GOLDEN / "docs", root)
    (root / ".cuedeck").mkdir()
    open_workspace(root).service("search").sync()  # saves the postings
    return root


def same_answers(root: Path) -> None:
    for query in WORDS:
        engine = open_workspace(root).search(query, mode="keyword", limit=10)
        quick = keyword_search(open_workspace(root), query, 10)
        assert quick is not None
        assert [attr_tuple(r) for r in quick] == [attr_tuple(r) for r in engine], query


def attr_tuple(result: object) -> tuple[object, ...]:
    return tuple(
        getattr(result, name)
        for name in ("path", "score", "anchors", "line", "snippet", "keyword_score", "title")
    )


def test_the_quick_path_answers_as_the_engine(golden: Path) -> None:
    same_answers(golden)


def test_changed_files_are_scored_as_the_engine_scores_them(golden: Path) -> None:
    stat = (golden / "webhooks.md").stat()
    with (golden / "webhooks.md").open("a", encoding="utf-8") as handle:
        handle.write("\n## Failed deliveries\n\nA webhook delivery that failed is retried.\n")
    os.utime(golden / "webhooks.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    (golden / "new.md").write_text("# Signing webhooks\n\nRotate the secret.\n", encoding="utf-8")
    (golden / "faq.md").unlink()
    same_answers(golden)  # scores equal to the last digit shown


def every_key_read(workspace: Workspace) -> list[str]:
    """Filled with each read of every stored key the workspace's index makes from now on."""
    seen: list[str] = []
    workspace.index.store.db().set_trace_callback(
        lambda sql: seen.append(sql) if sql == "SELECT path, sha256 FROM documents" else None
    )
    return seen


def recorded(root: Path) -> dict[str, list[object]]:
    changed: dict[str, list[object]] = json.loads((root / CHANGES_FILE).read_text())["changed"]
    return changed


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_what_changed_since_the_last_query_is_read_from_the_journal(golden: Path) -> None:
    first = open_workspace(golden)
    compared = every_key_read(first)
    assert keyword_search(first, "token", 10)
    assert compared and recorded(golden) == {}  # no record yet: every key compared once
    with (golden / "webhooks.md").open("a", encoding="utf-8") as handle:
        handle.write("\n## Failed deliveries\n\nA webhook delivery that failed is retried.\n")
    (golden / "new.md").write_text("# Signing webhooks\n\nRotate the secret.\n", encoding="utf-8")
    (golden / "faq.md").unlink()
    (golden / "auth/tokens.md").rename(golden / "auth/access-tokens.md")
    open_workspace(golden).refresh()  # another process brings the index in step
    workspace = open_workspace(golden)
    compared = every_key_read(workspace)
    assert keyword_search(workspace, "webhook", 10)
    assert compared == []  # the journal named the four files
    changed = recorded(golden)
    assert sorted(changed) == [
        "auth/access-tokens.md", "auth/tokens.md", "faq.md", "new.md", "webhooks.md"
    ]  # fmt: skip
    assert changed["webhooks.md"][1] == sha(golden / "webhooks.md") and changed["webhooks.md"][0]
    assert changed["new.md"] == [None, sha(golden / "new.md")]
    assert changed["faq.md"][1] is None and changed["auth/tokens.md"][1] is None
    assert changed["auth/access-tokens.md"] == [None, sha(golden / "auth/access-tokens.md")]
    same_answers(golden)
    (golden / "faq.md").write_text((GOLDEN / "docs/faq.md").read_text(), encoding="utf-8")
    (golden / "auth/access-tokens.md").rename(golden / "auth/tokens.md")
    same_answers(golden)
    assert sorted(recorded(golden)) == ["new.md", "webhooks.md"]  # as saved again


def test_a_record_for_other_postings_or_another_index_is_not_trusted(golden: Path) -> None:
    assert keyword_search(open_workspace(golden), "token", 10)
    with (golden / "webhooks.md").open("a", encoding="utf-8") as handle:
        handle.write("\nSigned with a rotating token.\n")
    open_workspace(golden).refresh(rebuild=True)  # a new database: its journal starts anew
    workspace = open_workspace(golden)
    compared = every_key_read(workspace)
    assert keyword_search(workspace, "token", 10)
    assert compared  # every key compared again
    assert list(recorded(golden)) == ["webhooks.md"]
    same_answers(golden)
    (golden / POSTINGS_FILE).unlink()
    open_workspace(golden).service("search").sync()  # saved again, with the edit
    workspace = open_workspace(golden)
    compared = every_key_read(workspace)
    assert keyword_search(workspace, "token", 10)
    assert compared and recorded(golden) == {}
    (golden / CHANGES_FILE).write_text("{not json", encoding="utf-8")
    same_answers(golden)  # a damaged record is made again


def test_without_saved_postings_the_engine_answers(golden: Path) -> None:
    (golden / POSTINGS_FILE).unlink()
    assert keyword_search(open_workspace(golden), "token", 5) is None
    (golden / POSTINGS_FILE).write_bytes(b"not postings")
    assert keyword_search(open_workspace(golden), "token", 5) is None


def test_a_damaged_saved_path_leaves_the_answer_to_the_engine(golden: Path) -> None:
    postings = golden / POSTINGS_FILE
    data = postings.read_bytes()
    at = data.rindex(b"webhooks.md")  # in the keys, after the arrays
    postings.write_bytes(data[:at] + b"\xff" + data[at + 1 :])
    assert keyword_search(open_workspace(golden), "webhook", 5) is None
    results = open_workspace(golden).search("webhook", mode="keyword", limit=5)
    assert results[0].path == "webhooks.md"  # the engine rebuilt the file


def test_cue_search_keyword_imports_no_numpy(golden: Path) -> None:
    code = (
        "import sys\n"
        "from cuedeck_cli.app import main\n"
        f"sys.argv = ['cue', '-C', {str(golden)!r}, 'search', '--mode', 'keyword', 'token']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "print('numpy' in sys.modules, 'onnxruntime' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[0].startswith(" 1. auth/tokens.md")
    assert done.stdout.splitlines()[-1] == "False False"


def test_printed_results_leave_deferred_token_counts_uncounted(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for n in range(DEFER_COUNTS + 6):  # a large refresh: counts deferred to the first read
        page = root / f"docs/p{n}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# Page {n}\n\nA wombat page. " + "More words. " * n, encoding="utf-8")
    (root / ".cuedeck").mkdir()
    open_workspace(root).service("search").sync()

    def search(*extra: str) -> str:
        args = ["-C", str(root), "search", "--mode", "keyword", "wombat", *extra]
        done = CliRunner().invoke(make_cli(), args)
        assert done.exit_code == 0, done.output
        return done.stdout

    def counted() -> dict[str, int]:
        with sqlite3.connect(root / INDEX_DB) as connection:
            return dict(connection.execute("SELECT sha256, tokens FROM token_counts").fetchall())

    assert search().startswith(" 1. docs/p0.md:1")
    assert counted() == {}  # printed lines show no counts: none was made
    results = json.loads(search("--json"))["results"]
    workspace = open_workspace(root)
    for result in results:
        text = (root / result["path"]).read_text(encoding="utf-8")
        assert result["tokens"] == workspace.count_tokens(text) > 0
    assert counted() == {r["hash"]: r["tokens"] for r in results}
