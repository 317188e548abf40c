"""Cards that merge: real git merges with the driver ``cue init`` installs.

The table: fields changed on both sides, notes appended on both, a card created on both
branches (where a sequential counter would have given both the same id), and a field
changed two ways. Only the last one conflicts; its conflict is readable, ``cue doctor``
reports it and ``cue card list`` shows the card as broken with its path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuedeck_tasks.cardmerge import conflict_lines, merge_card

CUE = str(Path(sys.executable).with_name("cue"))
CARD = ".cuedeck/cards/k3x9q2.md"
BASE = """---
id: k3x9q2
title: Add refresh tokens
status: todo
priority: medium
tags: [auth]
created: "2026-11-02T09:15:00Z"
updated: "2026-11-02T09:15:00Z"
---
# Add refresh tokens

Rotate them on every use.

## Notes

- 2026-11-02T09:15:00Z: agreed with security
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CUE_"))}
    who = {f"GIT_{role}_{part}": value for role in ("AUTHOR", "COMMITTER")
           for part, value in (("NAME", "t"), ("EMAIL", "t@t"))}  # fmt: skip
    return {**env, **who, "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=_env(), check=check
    )


def cue(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CUE, "-C", str(root), *args], capture_output=True, text=True, env=_env(), check=False
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one card, the merge driver installed by ``cue init``."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    done = cue(root, "init", "--merge-driver")
    assert done.returncode == 0, done.stderr
    assert "merge driver" in done.stdout
    (root / CARD).write_text(BASE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def _edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


def _branches(root: Path, ours: list[tuple[str, str, str]], theirs: list[tuple[str, str, str]]):  # type: ignore[no-untyped-def]
    """Commit ``theirs`` edits on a branch and ``ours`` on main, then merge the branch."""
    git(root, "checkout", "-q", "-b", "theirs")
    for path, old, new in theirs:
        _edit(root, path, old, new)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "theirs")
    git(root, "checkout", "-q", "main")
    for path, old, new in ours:
        _edit(root, path, old, new)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ours")
    return git(root, "merge", "--no-edit", "theirs", check=False)


def test_different_fields_changed_on_both_sides_merge_cleanly(repo: Path) -> None:
    merged = _branches(
        repo,
        [(CARD, "status: todo", "status: active"), (CARD, '09:15:00Z"\n---', '10:00:00Z"\n---')],
        [(CARD, "priority: medium", "priority: high"), (CARD, "tags: [auth]", "tags: [auth, api]")],
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo / CARD).read_text()
    assert "status: active" in text and "priority: high" in text
    assert "tags: [auth, api]" in text and 'updated: "2026-11-02T10:00:00Z"' in text
    assert not conflict_lines(text.splitlines())


def test_notes_appended_on_both_sides_are_all_kept_in_time_order(repo: Path) -> None:
    end = "agreed with security\n"
    merged = _branches(
        repo,
        [(CARD, end, end + "- 2026-11-03T08:00:00Z: ours: started\n")],
        [(CARD, end, end + "- 2026-11-02T12:00:00Z: theirs: found a bug\n  with details\n")],
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    notes = (repo / CARD).read_text().split("## Notes\n\n")[1]
    assert notes == (
        "- 2026-11-02T09:15:00Z: agreed with security\n"
        "- 2026-11-02T12:00:00Z: theirs: found a bug\n  with details\n"
        "- 2026-11-03T08:00:00Z: ours: started\n"
    )


@pytest.mark.slow
def test_cards_created_on_both_branches_get_ids_that_do_not_collide(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "theirs")
    theirs = cue(repo, "card", "new", "Card number two").stdout.strip()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "theirs")
    git(repo, "checkout", "-q", "main")
    ours = cue(repo, "card", "new", "Card number two").stdout.strip()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ours")
    # A sequential counter would have named both "2": the same file, a conflict.
    assert ours != theirs and len(ours) == len(theirs) == 6
    merged = git(repo, "merge", "--no-edit", "theirs", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    listed = json.loads(cue(repo, "card", "list", "--json").stdout)
    assert sorted(card["id"] for card in listed) == sorted(["k3x9q2", ours, theirs])


@pytest.mark.slow
def test_a_field_changed_two_ways_is_a_readable_conflict_doctor_reports(repo: Path) -> None:
    merged = _branches(
        repo,
        [(CARD, "status: todo", "status: done")],
        [(CARD, "status: todo", "status: archived"), (CARD, "priority: medium", "priority: low")],
    )
    assert merged.returncode != 0
    assert "CONFLICT" in merged.stdout
    text = (repo / CARD).read_text()
    assert "<<<<<<< ours\nstatus: done\n=======\nstatus: archived\n>>>>>>> theirs\n" in text
    assert "priority: low" in text  # the other field still merged
    assert conflict_lines(text.splitlines()) == (4,)
    doctor = cue(repo, "doctor", "--json")
    problems = json.loads(doctor.stdout)["problems"]
    assert any(p["code"] == 1503 and p["path"] == CARD and p["line"] == 4 for p in problems)
    listing = cue(repo, "card", "list")
    row = next(line for line in listing.stdout.splitlines() if line.startswith("k3x9q2"))
    assert row.split()[1] == "broken"
    assert f"{CARD}:4: merge conflict" in listing.stderr


@pytest.mark.slow
def test_a_clone_without_the_driver_is_told_how_to_install_it(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    doctor = json.loads(cue(clone, "doctor", "--json").stdout)["problems"]
    warning = next(p for p in doctor if p["code"] == 1504)
    assert warning["path"] == ".gitattributes" and "--merge-driver" in warning["help"]
    done = cue(clone, "init")  # no terminal: not asked, but told
    assert "cue init --merge-driver" in done.stdout
    assert git(clone, "config", "--get", "merge.cuedeck-card.driver", check=False).stdout == ""
    cue(clone, "init", "--merge-driver")
    assert "card merge-driver" in git(clone, "config", "--get", "merge.cuedeck-card.driver").stdout
    assert not [p for p in json.loads(cue(clone, "doctor", "--json").stdout)["problems"]
                if p["code"] == 1504]  # fmt: skip


def test_merging_texts_keeps_what_each_side_changed() -> None:
    ours = BASE.replace("Rotate them on every use.", "Rotate them on every use, always.")
    theirs = BASE.replace("# Add refresh tokens\n", "# Add refresh tokens\n\nIntro.\n")
    merged = merge_card(BASE, ours, theirs)
    assert merged.conflicts == 0
    assert "Intro." in merged.text and "always." in merged.text
    both = merge_card(BASE, ours, BASE.replace("every use.", "each use."))
    assert both.conflicts == 1 and "<<<<<<< ours\nRotate them on every use, always.\n" in both.text


def test_a_lone_setext_underline_is_no_conflict() -> None:
    assert conflict_lines(["Title", "=======", "text"]) == ()
    assert conflict_lines(["<<<<<<< ours", "a", "=======", "b", ">>>>>>> theirs"]) == (1,)
