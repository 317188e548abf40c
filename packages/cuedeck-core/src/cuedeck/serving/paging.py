"""Pages of a file that end on whole lines and fit a token budget.

The one paging scheme of ``read_doc`` and ``get_file_content``: lines are taken in
order while they fit, a single line longer than the budget is returned whole (so
paging always makes progress), and text is decoded from the file's own bytes, line
endings and all, so joining every page rebuilds the file exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.text import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


@attrs.frozen
class Page:
    """The lines ``[start, start + taken)`` of a file, as text, with their token count."""

    text: str
    tokens: int
    taken: int
    over_budget: bool  # one line alone is over the budget (and is returned whole)


def page_lines(
    count: Callable[[str], int], lines: Sequence[bytes], start: int, end: int, budget: int
) -> Page:
    """The page of ``lines[start:end]`` that fits ``budget`` tokens by ``count``."""
    texts: list[str] = []
    used = 0
    for line in lines[start:end]:
        text = line.decode("utf-8", errors="replace")
        cost = count(text)
        if texts and used + cost > budget:
            break
        texts.append(text)
        used += cost
    # Per-line counts are an upper bound in practice; recount the page to report it,
    # and trim in the rare case where joining lines costs more than the sum.
    content = "".join(texts)
    tokens = count(content)
    while tokens > budget and len(texts) > 1:
        texts.pop()
        content = "".join(texts)
        tokens = count(content)
    return Page(content, tokens, len(texts), tokens > budget)


def check_offset(offset: int, total: int) -> None:
    """Refuse (1004) a page whose first line (``offset``, 1-based) is past the last of
    ``total`` lines; an empty file has one empty page."""
    if total and offset - 1 >= total:
        raise InvalidInput(
            f"offset {offset} is past the end ({counted(total, 'line')})",
            field="offset",
            total_lines=total,
        )
