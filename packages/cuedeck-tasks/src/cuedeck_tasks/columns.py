"""Card lists as plain text columns, fast enough for thousands of rows.

A rich table measures and renders every cell as a segment (0.5 s for 1,000 cards); card
lists need no more than aligned columns: the title wraps when the terminal is narrow,
assignee and tags are clipped with an ellipsis, every other column keeps its width.
Widths are terminal cells, so wide characters stay aligned.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import TYPE_CHECKING

import click
from rich.cells import cell_len

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from cuedeck_tasks.cards import Card

GAP = 2
CLIP_WIDTH = 18
MIN_WRAP = 12


def _clip(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cell_len(text))


def render_columns(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    wrap: str | None = None,
    clip: Sequence[str] = (),
    bold_header: bool = False,
) -> str:
    """``rows`` under ``headers`` in aligned columns no wider than ``width`` if possible."""
    clipped = [headers[i] in clip for i in range(len(headers))]
    cells = [
        [_clip(cell, CLIP_WIDTH) if clipped[i] else cell for i, cell in enumerate(row)]
        for row in rows
    ]
    widths = [
        max([cell_len(header)] + [cell_len(row[i]) for row in cells])
        for i, header in enumerate(headers)
    ]
    folded = headers.index(wrap) if wrap in headers else None
    total = sum(widths) + GAP * (len(widths) - 1)
    if folded is not None and total > width:
        widths[folded] = max(MIN_WRAP, widths[folded] - (total - width))
    lines = []
    header = "".join(
        _pad(name, widths[i]) + (" " * GAP if i < len(headers) - 1 else "")
        for i, name in enumerate(headers)
    ).rstrip()
    if bold_header:
        import click

        header = click.style(header, bold=True)
    lines.append(header)
    for row in cells:
        parts = [[cell] for cell in row]
        if folded is not None and cell_len(row[folded]) > widths[folded]:
            parts[folded] = textwrap.wrap(row[folded], widths[folded], break_long_words=True)
        for depth in range(max(len(part) for part in parts)):
            line = "".join(
                _pad(part[depth] if depth < len(part) else "", widths[i])
                + (" " * GAP if i < len(parts) - 1 else "")
                for i, part in enumerate(parts)
            )
            lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


#: The width card lists take when stdout is no terminal (one row per line).
PIPED_WIDTH = 160


def print_cards(cards: list[Card], *, empty: str, holders: Mapping[str, str] | None = None) -> None:
    """Cards as aligned columns (plain text: thousands of rows print in milliseconds);
    ``holders`` (agent by card) adds a HELD BY column when any of ``cards`` is held.
    A card holding conflict markers shows as ``broken``."""
    if not cards:
        click.echo(empty, err=True)
        return
    terminal = sys.stdout.isatty()  # rich's console is not needed (nor its import time)
    width = shutil.get_terminal_size().columns if terminal else PIPED_WIDTH
    dated = width >= 100  # room for the update day beside the title
    held = {card.id: holders[card.id] for card in cards if holders and card.id in holders}
    headers = ["ID", "STATUS", "PRIORITY", "TITLE", "ASSIGNEE", "TAGS", "DEPS"]
    rows = [
        [
            card.id,
            "broken" if card.conflicted else card.status,
            card.priority,
            " ".join(card.title.split()),
            card.assignee or "",
            ", ".join(card.tags),
            ", ".join(card.depends_on),
            *([held.get(card.id, "")] if held else []),
            *([(card.updated or "")[:10]] if dated else []),
        ]
        for card in cards
    ]
    text = render_columns(
        [*headers, *(["HELD BY"] if held else []), *(["UPDATED"] if dated else [])],
        rows,
        width=width,
        wrap="TITLE",
        clip=("ASSIGNEE", "TAGS", "HELD BY"),
        bold_header=terminal,
    )
    sys.stdout.write(text)


def warn_problems(cards: Iterable[Card]) -> None:
    """A ``warning: path:line: problem`` line on stderr for each problem of ``cards``."""
    for found in cards:
        for problem in found.problems:
            line, _, message = problem.partition(": ")
            if line.startswith("line ") and line[5:].isdigit():
                where = f"{found.path}:{line[5:]}"
            else:
                where, message = found.path, problem
            click.secho(f"warning: {where}: {message}", err=True, fg="yellow")
