"""Confirmation tokens: single use, bound to operation, arguments and state, expiring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import ConfirmationRequired, CueError
from cuedeck.plugins.host import make_plugin_host
from cuedeck.plugins.tools import Tool
from cuedeck.serving.confirmation import ALPHABET, Confirmations, ConfirmationToken, confirm
from cuedeck.workspace import open_workspace
from tests.conftest import MakeWorkspace


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tokens(tmp_path: Path) -> tuple[Confirmations, Clock]:
    clock = Clock()
    return Confirmations(tmp_path, clock=clock), clock


ARGS = {"mode": "hard", "target": "HEAD~1"}


def test_token_confirms_exactly_its_call_once(tokens: tuple[Confirmations, Clock]) -> None:
    store, _ = tokens
    token = store.issue("git_reset", ARGS, "state-a")
    assert set(token.replace("-", "")) <= set(ALPHABET)
    store.redeem(token, "git_reset", dict(ARGS), "state-a", warning="w")
    with pytest.raises(ConfirmationRequired) as refused:
        store.redeem(token, "git_reset", ARGS, "state-a", warning="lose 2 commits")
    assert refused.value.data["reason"] == "unknown or already used"
    assert refused.value.data["warning_message"] == "lose 2 commits"
    fresh = refused.value.data["confirmation_token"]
    store.redeem(fresh, "git_reset", ARGS, "state-a", warning="w")


@pytest.mark.parametrize(
    ("operation", "arguments", "state", "reason"),
    [
        ("git_reset", {"mode": "hard", "target": "HEAD~2"}, "state-a", "other arguments"),
        ("git_reset", ARGS, "state-b", "state has changed"),
        ("git_clean", ARGS, "state-a", "issued for git_reset"),
    ],
)
def test_token_refused_for_anything_else(
    tokens: tuple[Confirmations, Clock],
    operation: str,
    arguments: dict[str, str],
    state: str,
    reason: str,
) -> None:
    store, _ = tokens
    token = store.issue("git_reset", ARGS, "state-a")
    with pytest.raises(ConfirmationRequired) as refused:
        store.redeem(token, operation, arguments, state, warning="w")
    assert reason in refused.value.data["reason"]
    # The refused token is spent: it cannot be retried on its own call either.
    with pytest.raises(ConfirmationRequired):
        store.redeem(token, "git_reset", ARGS, "state-a", warning="w")


def test_token_expires_after_five_minutes(tokens: tuple[Confirmations, Clock]) -> None:
    store, clock = tokens
    token = store.issue("delete", {"ids": ["a"]})
    clock.now += 301
    with pytest.raises(ConfirmationRequired) as refused:
        store.redeem(token, "delete", {"ids": ["a"]}, warning="w")
    assert refused.value.data["reason"] == "expired"
    assert refused.value.code == 1009


def test_tokens_are_shared_between_processes_through_the_cache(tmp_path: Path) -> None:
    token = Confirmations(tmp_path).issue("delete", {"ids": ["a"]})
    assert token not in (tmp_path / ".cuedeck/.cache/confirmations.json").read_text()
    Confirmations(tmp_path).redeem(token, "delete", {"ids": ["a"]}, warning="w")


# -- the helper every destructive tool uses ---------------------------------------------------


def shred(
    workspace: Any,
    path: str,
    passes: int = 1,
    keep_backup: bool = False,
    tags: list[str] | None = None,
    confirmation_token: ConfirmationToken = None,
) -> dict[str, Any]:
    """A destructive tool written like every other: it names what it destroys and confirms."""
    asked = confirm(
        workspace, warning=f"shreds {path}", token=confirmation_token, state="the bytes"
    )
    return dict(asked) if asked is not None else {"success": True}


CALL = {"path": "a.txt", "passes": 3, "keep_backup": True, "tags": ["x", "y"]}


@pytest.mark.parametrize(
    "changed",
    [{"path": "b.txt"}, {"passes": 4}, {"keep_backup": False}, {"tags": ["y", "x"]},
     {"tags": None}],
)  # fmt: skip
def test_every_argument_of_the_call_is_bound_without_the_tool_naming_it(
    make_workspace: MakeWorkspace, changed: dict[str, Any]
) -> None:
    workspace = open_workspace(make_workspace())
    tool = Tool.from_function(shred, name="shred", plugin="test", destructive=True)
    token = tool.call(workspace, CALL)["confirmation_token"]
    with pytest.raises(ConfirmationRequired) as refused:
        tool.call(workspace, {**CALL, **changed, "confirmation_token": token})
    assert "other arguments" in refused.value.data["reason"]
    fresh = refused.value.data["confirmation_token"]
    assert tool.call(workspace, {**CALL, **changed, "confirmed_token": fresh}) == {"success": True}


def test_confirm_outside_a_tool_call_is_a_clear_error(make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace())
    with pytest.raises(CueError) as refused:
        shred(workspace, "a.txt")
    assert "outside a tool call" in refused.value.message


def test_every_destructive_tool_asks_for_a_token_and_accepts_both_names() -> None:
    tools = make_plugin_host().tools()
    destructive = {name for name, tool in tools.items() if tool.destructive}
    assert "delete_file" in destructive
    for name in destructive:
        properties = tools[name].input_schema()["properties"]
        assert "confirmation_token" in properties, name
        assert "confirmed_token" not in properties, name  # accepted, not published
