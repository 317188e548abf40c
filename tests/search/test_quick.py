"""The quick keyword path of `cue search`: the engine's answer, without numpy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck_search.bm25 import POSTINGS_FILE
from cuedeck_search.quick import keyword_search
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


def test_without_saved_postings_the_engine_answers(golden: Path) -> None:
    (golden / POSTINGS_FILE).unlink()
    assert keyword_search(open_workspace(golden), "token", 5) is None
    (golden / POSTINGS_FILE).write_bytes(b"not postings")
    assert keyword_search(open_workspace(golden), "token", 5) is None


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
