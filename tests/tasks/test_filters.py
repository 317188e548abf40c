"""Card filters: every field, date forms and ages, combinations and bad input."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cuedeck.errors import InvalidInput
from cuedeck.workspace import Workspace
from cuedeck_tasks.filters import CardFilter, DateFilter
from tests.tasks.conftest import CardsFactory, card_text, store_of

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def board(workspace_with: CardsFactory) -> Workspace:
    return workspace_with(
        {
            "aaaaaa": card_text(
                "aaaaaa",
                "Old and done",
                status="done",
                priority="low",
                extra="assignee: Dana\ntags: [auth, api]\n",
                created="2025-01-15T08:00:00Z",
                updated="2025-02-01T08:00:00Z",
            ),
            "bbbbbb": card_text(
                "bbbbbb",
                "Recent and urgent",
                status="active",
                priority="critical",
                extra="assignee: '@dana'\ntags: [API]\n",
                created="2026-02-25T10:00:00Z",
                updated="2026-02-28T10:00:00Z",
            ),
            "cccccc": card_text(
                "cccccc",
                "Unassigned",
                extra="tags: [docs]\n",
                created="2026-01-01T00:00:00Z",
                updated="2026-01-01T00:00:00Z",
            ),
            "dddddd": "---\ntitle: No dates\nstatus: archived\n---\n",
        }
    )


def ids(workspace: Workspace, **filters: object) -> list[str]:
    built = CardFilter.build(now=NOW, **filters)  # type: ignore[arg-type]
    return [card.id for card in store_of(workspace).select(built)]


def test_no_filter_lists_every_card(board: Workspace) -> None:
    assert ids(board) == ["aaaaaa", "bbbbbb", "cccccc", "dddddd"]


def test_status_and_priority(board: Workspace) -> None:
    assert ids(board, status="done") == ["aaaaaa"]
    assert ids(board, status=["active", "archived"]) == ["bbbbbb", "dddddd"]
    assert ids(board, priority="critical") == ["bbbbbb"]
    assert ids(board, priority=["medium"]) == ["cccccc", "dddddd"]


def test_assignee_ignores_case_and_a_leading_at(board: Workspace) -> None:
    assert ids(board, assignee="dana") == ["aaaaaa", "bbbbbb"]
    assert ids(board, assignee="@DANA") == ["aaaaaa", "bbbbbb"]
    assert ids(board, assignee="lee") == []


def test_tags_match_any_ignoring_case(board: Workspace) -> None:
    assert ids(board, tags=["api"]) == ["aaaaaa", "bbbbbb"]
    assert ids(board, tags=["docs", "auth"]) == ["aaaaaa", "cccccc"]
    assert ids(board, tags=["nope"]) == []


def test_dates_and_comparisons(board: Workspace) -> None:
    assert ids(board, created="2026-01-01") == ["cccccc"]
    assert ids(board, created="=2026-01-01") == ["cccccc"]
    assert ids(board, created=">2026-01-01") == ["bbbbbb"]
    assert ids(board, created=">=2026-01-01") == ["bbbbbb", "cccccc"]
    assert ids(board, created="<2026-01-01") == ["aaaaaa"]
    assert ids(board, created="<=2026-01-01") == ["aaaaaa", "cccccc"]
    assert ids(board, updated=">2026-02-28T09:00:00Z") == ["bbbbbb"]
    assert ids(board, updated="<2026-02-28T13:00:00+02:00") == ["aaaaaa", "bbbbbb", "cccccc"]


def test_ages_in_days_weeks_months_and_years(board: Workspace) -> None:
    assert ids(board, created="<1w") == ["bbbbbb"]  # newer than a week
    assert ids(board, created="1w") == ["bbbbbb"]  # a bare age means "within"
    assert ids(board, created=">5d") == ["aaaaaa", "cccccc"]  # older than five days
    assert ids(board, created=">3d") == ["aaaaaa", "bbbbbb", "cccccc"]
    assert ids(board, updated="<2m") == ["bbbbbb", "cccccc"]
    assert ids(board, created=">1y") == ["aaaaaa"]
    assert ids(board, updated="<30d") == ["bbbbbb"]


def test_filters_combine(board: Workspace) -> None:
    assert ids(board, assignee="dana", tags=["api"], created="<1y") == ["bbbbbb"]
    assert ids(board, status="done", priority="critical") == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created", "yesterday"),
        ("created", "2w ago"),
        ("updated", "2024-13-01"),
        ("updated", "=3d"),
        ("created", "2024-01-01Tnoon"),
        ("status", "blocked"),
        ("priority", "urgent"),
    ],
)
def test_bad_filters_are_invalid_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        CardFilter.build(**{field: value})  # type: ignore[arg-type]
    assert caught.value.data["field"] == field


def test_a_missing_or_unreadable_timestamp_never_matches() -> None:
    since = DateFilter.parse(">2000-01-01", field="created")
    assert since.accepts("2024-05-05T00:00:00Z")
    assert since.accepts("2024-05-05")  # a bare day reads as midnight UTC
    assert not since.accepts(None)
    assert not since.accepts("not a date")
