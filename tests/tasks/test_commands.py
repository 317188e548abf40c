"""``cue card ...`` and ``cue open``: human output, every ``--json`` shape, exit codes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cuedeck.state import active_card
from cuedeck.workspace import Workspace
from cuedeck_cli.app import make_cli
from cuedeck_tasks import cards, commands
from cuedeck_tasks.graph import EXPORT_FORMATS
from cuedeck_tasks.store import CardChanges
from tests.tasks.conftest import store_of

CARD_KEYS = {
    "id",
    "title",
    "status",
    "priority",
    "assignee",
    "tags",
    "depends_on",
    "refs",
    "created",
    "updated",
    "path",
    "sha256",
    "conflict_lines",
}


def cue(workspace: Workspace, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_cli(), ["-C", str(workspace.root), *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def cue_json(workspace: Workspace, *args: str) -> Any:
    code, out, err = cue(workspace, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_choices_agree_with_the_card_model() -> None:
    assert commands.STATUS_CHOICES == cards.STATUSES
    assert commands.PRIORITY_CHOICES == cards.PRIORITIES
    assert commands.FORMAT_CHOICES == EXPORT_FORMATS


def test_new_prints_the_id_and_json_the_card(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "new", "Plain card")
    assert code == 0 and re.fullmatch(r"[a-z0-9]{6}\n", out)
    created = cue_json(
        chain,
        "card",
        "new",
        "Login: v2 #1",
        "--priority",
        "high",
        "--tag",
        "auth",
        "-t",
        "api",
        "--assignee",
        "dana",
        "--depends-on",
        "b2",  # a unique prefix is enough
        "-d",
        "a1a1a1",
        "--body",
        "Details.",
    )
    assert set(created) == CARD_KEYS
    assert created["title"] == "Login: v2 #1"
    assert (created["priority"], created["assignee"], created["status"]) == ("high", "dana", "todo")
    assert created["tags"] == ["auth", "api"]
    assert created["depends_on"] == ["b2b2b2", "a1a1a1"]
    assert (chain.root / created["path"]).read_text().endswith("# Login: v2 #1\n\nDetails.\n")


def test_new_with_a_missing_dependency_fails_with_1001(chain: Workspace) -> None:
    code, out, err = cue(chain, "card", "new", "X", "--depends-on", "a1a1a2")
    assert code == 1 and out == ""
    assert "error[1001]" in err and "a1a1a2" in err and "Did you mean 'a1a1a1'?" in err
    assert len(store_of(chain).all()) == 3


def test_list_table_and_json_with_filters(chain: Workspace) -> None:
    store_of(chain).update("c3c3c3", CardChanges(assignee="Dana", add_tags=("auth",)))
    code, out, _ = cue(chain, "card", "list")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["ID", "STATUS", "PRIORITY", "TITLE"]
    assert [row.split()[0] for row in rows if row[:1].strip()] == ["a1a1a1", "b2b2b2", "c3c3c3"]
    listed = cue_json(chain, "card", "list")
    assert [card["id"] for card in listed] == ["a1a1a1", "b2b2b2", "c3c3c3"]
    assert all(set(card) == CARD_KEYS | {"claim"} for card in listed)
    filtered = cue_json(
        chain,
        "card",
        "list",
        "--status",
        "todo",
        "--priority",
        "medium",
        "--assignee",
        "DANA",
        "--tag",
        "auth",
        "--created",
        "<=2026-01-10",
        "--updated",
        "<1d",
    )
    assert [card["id"] for card in filtered] == ["c3c3c3"]
    assert cue_json(chain, "card", "list", "--status", "archived") == []
    code, _out, err = cue(chain, "card", "list", "--status", "archived")
    assert code == 0 and "no cards match" in err
    code, _out, err = cue(chain, "card", "list", "--created", "soon")
    assert code == 1 and "error[1004]" in err


def test_show(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "show", "b2")
    assert code == 0
    assert re.search(r"title\s+Create the users table", out)
    assert re.search(r"dependents\s+c3c3c3", out)
    assert out.rstrip().endswith("# Create the users table")
    shown = cue_json(chain, "card", "show", "b2b2b2")
    assert set(shown) == CARD_KEYS | {"claim", "dependents", "problems", "body"}
    assert shown["dependents"] == ["c3c3c3"] and shown["problems"] == []
    assert shown["body"] == "# Create the users table"
    code, _out, err = cue(chain, "card", "show", "zzzzzz")
    assert code == 1 and "error[1001]" in err


def test_update(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "update", "b2", "--status", "active", "--note", "Go")
    assert (code, out) == (0, "b2b2b2: updated status, notes\n")
    assert cue(chain, "card", "update", "b2", "-t", "sql")[0] == 0
    updated = cue_json(
        chain,
        "card",
        "update",
        "b2b2b2",
        "--priority",
        "critical",
        "--assignee",
        "lee",
        "--title",
        "Users table v2",
        "--tag",
        "db",
        "--untag",
        "sql",
        "--no-depends-on",
        "a1a1a1",
    )
    assert set(updated) == CARD_KEYS | {"updated_fields", "recorded"}
    assert updated["updated_fields"] == ["title", "priority", "assignee", "tags", "depends_on"]
    assert (updated["title"], updated["priority"], updated["tags"]) == (
        "Users table v2",
        "critical",
        ["db"],
    )
    assert updated["depends_on"] == []
    code, out, _ = cue(chain, "card", "update", "b2b2b2", "--status", "active")
    assert (code, out) == (0, "b2b2b2: nothing changed\n")
    code, _out, err = cue(chain, "card", "update", "b2b2b2")
    assert code == 1 and "error[1004]" in err
    code, _out, err = cue(chain, "card", "update", "b2b2b2", "--tag", "x", "--untag", "x")
    assert code == 1 and "error[1004]" in err and "both added to and removed from tags" in err


def test_update_reports_the_cycle_path(chain: Workspace) -> None:
    code, _out, err = cue(chain, "card", "update", "a1a1a1", "--depends-on", "c3c3c3")
    assert code == 1
    assert "error[1002]" in err and "a1a1a1 → c3c3c3 → b2b2b2 → a1a1a1" in err.replace("\n", " ")


def test_activate_sets_the_active_card(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "activate", "c3")
    assert (code, out) == (0, "active card: c3c3c3 Implement login\n")
    assert active_card(chain.root) == "c3c3c3"
    assert store_of(chain).get("c3c3c3").status == "active"  # a todo card starts
    reply = cue_json(chain, "card", "activate", "a1a1a1")
    assert reply["active_card"] == "a1a1a1" and reply["card"]["status"] == "done"
    assert cue_json(chain, "card", "activate", "--clear") == {"active_card": None}
    assert active_card(chain.root) is None
    code, _out, err = cue(chain, "card", "activate", "zzzzzz")
    assert code == 1 and "error[1001]" in err and active_card(chain.root) is None
    code, _out, err = cue(chain, "card", "activate")
    assert code == 1 and err.startswith("error[1004]")  # a usage error, reported like any


def test_deps(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "deps", "c3c3c3")
    assert code == 0 and re.search(r"b2b2b2\s+todo\s+Create the users table", out)
    assert cue_json(chain, "card", "deps", "b2b2b2", "--reverse") == {
        "task_id": "b2b2b2",
        "type": "dependents",
        "count": 1,
        "tasks": [{"id": "c3c3c3", "title": "Implement login", "status": "todo"}],
    }
    code, _out, err = cue(chain, "card", "deps", "c3c3c3", "--reverse")
    assert code == 0 and "no card depends on c3c3c3" in err


def test_ready(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "ready")
    assert code == 0 and "b2b2b2" in out and "c3c3c3" not in out
    ready = cue_json(chain, "card", "ready")
    assert [card["id"] for card in ready] == ["b2b2b2"] and set(ready[0]) == CARD_KEYS | {"claim"}


def test_validate_exits_1_on_a_cycle_or_missing_card(chain: Workspace) -> None:
    code, out, _ = cue(chain, "card", "validate")
    assert code == 0 and out.startswith("All task dependencies are valid")
    assert cue_json(chain, "card", "validate", "c3c3c3")["valid"] is True
    path = chain.root / ".cuedeck/cards/a1a1a1.md"
    path.write_text(path.read_text().replace("status: done", "status: finished"))
    code, _out, err = cue(chain, "card", "validate")
    assert code == 0 and "status 'finished'" in err  # a warning, not a failure
    path.write_text(path.read_text().replace("depends_on: []", "depends_on: [c3c3c3]"))
    code, _out, err = cue(chain, "card", "validate")
    assert code == 1
    assert "error[1002]: circular dependency: a1a1a1 → c3c3c3 → b2b2b2 → a1a1a1" in err
    result = CliRunner().invoke(
        make_cli(), ["-C", str(chain.root), "card", "validate", "b2b2b2", "--json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False and report["task_id"] == "b2b2b2"
    path.write_text(path.read_text().replace("depends_on: [c3c3c3]", "depends_on: [ghost1]"))
    code, _out, err = cue(chain, "card", "validate", "a1a1a1")
    assert code == 1 and "error[1001]: a1a1a1 depends on ghost1, which does not exist" in err


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_graph_formats(chain: Workspace, fmt: str) -> None:
    code, out, _ = cue(chain, "card", "graph", "--format", fmt)
    assert code == 0
    assert out == store_of(chain).graph().export(fmt)
    if fmt == "json":
        assert {"card": "c3c3c3", "depends_on": "b2b2b2"} in json.loads(out)["edges"]


def test_open_without_a_terminal_lists_and_reads_a_number(
    chain: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "argv.json"
    editor = tmp_path / "nvim"
    editor.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    code, out, _ = cue(chain, "open", "users", "table", stdin="1\n")
    assert code == 0
    assert out.startswith("  1  card  Create the users table  .cuedeck/cards/b2b2b2.md\n")
    assert json.loads(record.read_text()) == [str(chain.root / ".cuedeck/cards/b2b2b2.md")]
    code, out, _ = cue(chain, "open", "login", "--print", stdin="1\n")
    assert code == 0 and out.rstrip().endswith(f"{chain.root / '.cuedeck/cards/c3c3c3.md'}:1")
    code, _out, _ = cue(chain, "open", stdin="\n")
    assert code == 0  # an empty answer quits
    code, _out, err = cue(chain, "open", stdin="99\n")
    assert code == 1 and "error[1004]" in err
    code, _out, err = cue(chain, "open", "qqqqqqqq")
    assert code == 1 and "error[1001]" in err and "nothing in the workspace matches" in err


def test_open_print_without_a_terminal_prints_only_the_best_match(chain: Workspace) -> None:
    code, out, _ = cue(chain, "open", "users", "table", "--print")
    assert (code, out) == (0, f"{chain.root / '.cuedeck/cards/b2b2b2.md'}:1\n")  # no menu
    code, out, err = cue(chain, "open", "qqqqqqqq", "--print")
    assert (code, out) == (1, "")
    assert err.startswith("error[1004]") and "nothing in the workspace matches" in err


def test_card_commands_validate_like_the_tools(chain: Workspace) -> None:
    # The 200-character title cap of create_task is the CLI's too: one code path.
    code, _out, err = cue(chain, "card", "new", "x" * 201)
    assert code == 1 and err.startswith("error[1004]") and "title" in err
    code, out, _ = cue(chain, "card", "new", "With a body", "--body", "Steps:\n\n1. one")
    assert code == 0
    assert "1. one" in store_of(chain).text(out.strip())
    listed = cue_json(chain, "card", "list", "--status", "todo", "--status", "done")
    assert {card["status"] for card in listed} == {"todo", "done"}


def test_list_warns_of_broken_cards_and_titles_them_by_their_heading(chain: Workspace) -> None:
    cards_dir = chain.root / ".cuedeck" / "cards"
    (cards_dir / "e5e5e5.md").write_text("---\ntitle: [Unclosed\nstatus: todo\n---\n# Rotas\n")
    (cards_dir / "f6f6f6.md").write_text("---\ntitle: Odd\ntags: {a: 1}\n---\n# Odd\n")
    code, out, err = cue(chain, "card", "list")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "Rotas" in rows["e5e5e5"]  # not its id for a title
    assert err.splitlines() == [
        "warning: .cuedeck/cards/e5e5e5.md:2: frontmatter is not valid YAML: "
        "did not find expected ',' or ']'",
        'warning: .cuedeck/cards/f6f6f6.md: tags must be a list of text, not a mapping: {"a": 1}',
    ]
    code, out, err = cue(chain, "card", "list", "--json")  # stdout stays JSON
    assert code == 0 and [c["title"] for c in json.loads(out)][3] == "Rotas"
    assert len(err.splitlines()) == 2


def test_update_of_a_malformed_field_names_the_file_once_with_its_line(chain: Workspace) -> None:
    path = chain.root / ".cuedeck" / "cards" / "f6f6f6.md"
    path.write_text("---\ntitle: Odd\nstatus: todo\ntags: {a: 1}\n---\n# Odd\n")
    code, _, err = cue(chain, "card", "update", "f6f6f6", "--tag", "x")
    assert code == 1
    assert err.splitlines() == [
        "error[1004] .cuedeck/cards/f6f6f6.md:4: tags has a value of the wrong type in the file",
        "  help: fix tags in the file by hand, then update the card",
    ]


def test_validate_counts_one_card_as_one_card(workspace_with: Any) -> None:
    from tests.tasks.conftest import card_text

    single = workspace_with({"a1a1a1": card_text("a1a1a1", "Only one")})
    code, out, _ = cue(single, "card", "validate")
    assert code == 0
    assert out == "All task dependencies are valid (no circular dependencies, 1 card)\n"


def test_a_missing_card_says_where_to_look(chain: Workspace) -> None:
    code, _, err = cue(chain, "card", "show", "zzzzzz")
    assert code == 1
    assert err.splitlines() == [
        "error[1001] .cuedeck/cards/zzzzzz.md: no card 'zzzzzz' in .cuedeck/cards/",
        "  help: `cue card list` shows every card and its id (a unique prefix works too)",
    ]
    code, _, err = cue(chain, "scene", "nope12")
    assert code == 1
    assert err.splitlines()[1] == (
        "  help: `cue card list` shows every card; without an id the scene is the active card's"
    )
