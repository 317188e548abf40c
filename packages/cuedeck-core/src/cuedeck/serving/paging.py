"""Pages of a file that end on whole lines and fit a token budget.

The one paging scheme of ``read_doc``, ``get_file_content`` and ``git_diff``: lines are
taken in order while they fit, and text is decoded from the file's own bytes, line
endings and all, so joining every page rebuilds the file exactly. A single line longer
than the budget is cut to fit, alone on its page (so paging always makes progress, and
a budget always holds): the rest of that line is in no page, and the page says so.
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
    #: The tokens of the page's one line when it alone was over the budget and was cut
    #: (``text`` holds its start), else None.
    cut_from: int | None = None


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
    if tokens > budget:
        start_of = cut(count, content, budget)
        return Page(start_of, count(start_of), 1, cut_from=tokens)
    return Page(content, tokens, len(texts))


def cut(count: Callable[[str], int], text: str, budget: int) -> str:
    """The longest start of ``text`` that fits ``budget`` tokens (a binary search on its
    length: a line of minified code can be a few hundred kilobytes)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def check_offset(offset: int, total: int) -> None:
    """Refuse (1004) a page whose first line (``offset``, 1-based) is past the last of
    ``total`` lines; an empty file has one empty page."""
    if total and offset - 1 >= total:
        raise InvalidInput(
            f"offset {offset} is past the end ({counted(total, 'line')})",
            field="offset",
            total_lines=total,
        )
