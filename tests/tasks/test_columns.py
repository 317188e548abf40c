"""Plain-text card columns: aligned by terminal cells, titles wrapped, long cells clipped."""

from __future__ import annotations

import pytest

pytest.importorskip("cuedeck_tasks")

from cuedeck_tasks.columns import render_columns

HEADERS = ["ID", "TITLE", "TAGS"]


def test_columns_align_and_trailing_space_is_dropped() -> None:
    text = render_columns(HEADERS, [["a1", "Short", ""], ["b22", "Longer title", "x"]], width=80)
    assert text.splitlines() == [
        "ID   TITLE         TAGS",
        "a1   Short",
        "b22  Longer title  x",
    ]


def test_a_narrow_terminal_wraps_the_title_only() -> None:
    title = "Rotate the refresh tokens on every use and revoke reused ones"
    text = render_columns(HEADERS, [["k3x9q2", title, "auth"]], width=40, wrap="TITLE")
    lines = text.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert lines[1].startswith("k3x9q2  Rotate") and lines[1].endswith("auth")
    assert lines[2].startswith(" " * 8)  # continuation under the title column
    assert " ".join(line[8:].split("  ")[0].strip() for line in lines[1:]) == title


def test_clipped_columns_end_with_an_ellipsis_and_wide_characters_align() -> None:
    tags = "security, compliance, backend, infra"
    text = render_columns(
        HEADERS, [["a", "日本語のタイトル", tags], ["b", "ascii", "x"]], width=120, clip=("TAGS",)
    )
    first, second = text.splitlines()[1:]
    assert first.endswith("…") and len(first.split("  ")[-1]) == 18
    # 8 wide characters take 16 cells: the TAGS column starts at the same cell in both rows
    assert first.index("security") + 8 == second.index("x")
