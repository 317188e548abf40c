"""Past changes' titles from real git: what is read, where it is kept, what it scores."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import numpy as np

from cuedeck.watch.reflects import head_commit
from cuedeck_search.past_changes import (
    HISTORY_FILE,
    MAX_FILES,
    ChangeTitles,
    load_titles,
    parse_log,
    read_changes,
)

if TYPE_CHECKING:
    from pathlib import Path


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=CueDeck", "-c", "user.email=cue@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def commit(root: Path, title: str, *paths: str) -> None:
    for path in paths:
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        with file.open("a", encoding="utf-8") as handle:
            handle.write("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", title)


def test_titles_and_the_files_each_change_modified_newest_first(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "Add the parser", "src/parser.py", "src/lexer.py")
    commit(tmp_path, "Parser: accept trailing commas", "src/parser.py")
    assert read_changes(tmp_path, 100) == [
        ("Parser: accept trailing commas", ["src/parser.py"]),
        ("Add the parser", ["src/lexer.py", "src/parser.py"]),
    ]


def test_merges_and_sweeping_changes_are_left_out(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "Reformat everything", *[f"m{i}.py" for i in range(MAX_FILES + 1)])
    git(tmp_path, "checkout", "-q", "-b", "side")
    commit(tmp_path, "Side work", "side.py")
    git(tmp_path, "checkout", "-q", "main")
    commit(tmp_path, "Main work", "main.py")
    git(tmp_path, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
    titles = [title for title, _ in read_changes(tmp_path, 100) or []]
    assert sorted(titles) == ["Main work", "Side work"]


def test_only_the_last_commits_asked_for(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    for number in range(5):
        commit(tmp_path, f"Change {number}", "a.py")
    assert [t for t, _ in read_changes(tmp_path, 2) or []] == ["Change 4", "Change 3"]
    assert read_changes(tmp_path, 0) == []


def test_a_workspace_in_a_folder_of_the_repository_sees_its_own_paths(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "Outside the workspace", "other/x.py")
    commit(tmp_path, "Inside it", "app/src/y.py", "other/z.py")
    assert read_changes(tmp_path / "app", 100) == [("Inside it", ["src/y.py"])]


def test_outside_git_there_is_no_history(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert head_commit(tmp_path) is None
    assert read_changes(tmp_path, 100) is None
    assert len(load_titles(tmp_path, 100, None)) == 0


def test_kept_per_head_and_read_again_after_a_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / ".cuedeck" / ".cache").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text(".cuedeck/.cache/\n", encoding="utf-8")  # cue init's
    commit(tmp_path, "Parser fix", "a.py")
    head = head_commit(tmp_path)
    assert load_titles(tmp_path, 100, head).paths == [".gitignore", "a.py"]
    saved = json.loads((tmp_path / HISTORY_FILE).read_text(encoding="utf-8"))
    assert saved["head"] == head and saved["titles"]["terms"] == ["parser", "fix"]
    # The saved file answers at the same HEAD (a path written there is what comes back).
    saved["titles"]["paths"] = ["from/the/saved/file.py", "a.py"]
    (tmp_path / HISTORY_FILE).write_text(json.dumps(saved), encoding="utf-8")
    assert load_titles(tmp_path, 100, head).paths == ["from/the/saved/file.py", "a.py"]
    # A damaged file is read from git again.
    saved["titles"]["rows"] = [5]
    (tmp_path / HISTORY_FILE).write_text(json.dumps(saved), encoding="utf-8")
    assert load_titles(tmp_path, 100, head).paths == [".gitignore", "a.py"]
    commit(tmp_path, "Lexer fix", "b.py")
    assert load_titles(tmp_path, 100, head_commit(tmp_path)).paths == ["b.py", ".gitignore", "a.py"]


def test_parse_log_reads_records_and_names() -> None:
    text = (
        "\x1eFix the lexer\n\nsrc/lexer.py\nsrc/token.py\n\x1eEmpty change\n\x1eDocs\n\nREADME.md\n"
    )
    assert parse_log(text) == [
        ("Fix the lexer", ["src/lexer.py", "src/token.py"]),
        ("Docs", ["README.md"]),
    ]


def test_titles_score_the_files_they_changed_by_bm25() -> None:
    titles = ChangeTitles(
        [
            ("Parser: accept trailing commas", ["src/parser.py"]),
            ("Lexer: accept unicode identifiers", ["src/lexer.py"]),
            ("Accept trailing commas in calls", ["src/parser.py", "src/calls.py"]),
        ]
    )
    documents = titles.documents({"src/parser.py": 0, "src/lexer.py": 1, "src/calls.py": 2})
    scores = titles.scores(["trail", "comma"], documents, 4, 1.2, 0.75)
    assert scores[0] > scores[2] > 0  # twice against once
    assert scores[1] == 0 and scores[3] == 0  # no such title; no file there
    unmapped = titles.documents({"src/lexer.py": 0})
    assert not np.any(titles.scores(["trail"], unmapped, 1, 1.2, 0.75))


def test_saved_titles_score_as_the_built_ones() -> None:
    built = ChangeTitles([("Parser: accept commas", ["p.py"]), ("Lexer commas", ["l.py", "p.py"])])
    loaded = ChangeTitles.loaded(json.loads(json.dumps(built.saved())))
    documents = built.documents({"p.py": 0, "l.py": 1})
    for query in (["comma"], ["parser", "comma"], ["lexer"], ["none"]):
        assert np.array_equal(
            built.scores(query, documents, 2, 1.2, 0.75),
            loaded.scores(query, loaded.documents({"p.py": 0, "l.py": 1}), 2, 1.2, 0.75),
        )
