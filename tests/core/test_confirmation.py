"""Confirmation tokens: single use, bound to operation, arguments and state, expiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.confirmation import ALPHABET, Confirmations
from cuedeck.errors import ConfirmationRequired


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
