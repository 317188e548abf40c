"""Fitting replies to a token budget: pages of items, lists of ids, a text cut to fit.

Items are taken in order while the reply fits ``max_tokens`` (by the workspace's
counter, the rest of the reply measured, not guessed); ``page.next_cursor`` is where the
next call starts. A single item longer than the whole budget is returned with its text
cut to fit and ``text_truncated: true`` (``cue memory show`` prints it whole).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_memory.replies import Page

#: Tokens kept for the page record and the list's own syntax (measured: about 40).
FRAME_TOKENS = 60


def start_of(cursor: str | None) -> int:
    """The offset a cursor names (None: the start)."""
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit():
        raise InvalidInput(f"{cursor!r} is not a cursor this tool returned", field="cursor")
    return int(cursor)


def page(
    total: int,
    item: Callable[[int], dict[str, Any]],
    count: Callable[[str], int],
    max_tokens: int,
    cursor: str | None = None,
    *,
    used: int = 0,
    bytes_bound: bool = False,
) -> tuple[list[dict[str, Any]], Page]:
    """Items ``item(n)`` from ``cursor`` on (of ``total``) that fit ``max_tokens``,
    ``used`` of them measured for the rest of the reply; and the page record. Items are
    made only as far as they fit.

    ``bytes_bound``: ``count`` never gives more tokens than a text has UTF-8 bytes, so
    items whose bytes all fit are taken uncounted; counting starts (from the first
    item) only when they might not. The page is the same either way."""
    start = start_of(cursor)
    rest = FRAME_TOKENS + used  # what the reply spends besides its items
    budget = max(1, max_tokens - rest)
    chosen: list[dict[str, Any]] = []
    texts: list[str] = []
    spent = 0  # tokens, or bytes (at least as many) while counting has not started
    counted = not bytes_bound
    for n in range(start, total):
        current = item(n)
        text = json.dumps(current, ensure_ascii=False)
        if not counted:
            size = len(text.encode("utf-8", "surrogatepass")) + 1  # and its comma
            if spent + size <= budget:
                chosen.append(current)
                texts.append(text)
                spent += size
                continue
            counted = True
            spent = sum(count(taken) + 1 for taken in texts)
        cost = count(text) + 1  # and its comma
        if spent + cost > budget:
            if not chosen:
                chosen.append(_cut(current, count, budget, max_tokens, rest))
            break
        chosen.append(current)
        spent += cost
    end = start + len(chosen)
    record: Page = {
        "returned": len(chosen),
        "total": total,
        "offset": start,
        "next_cursor": str(end) if end < total else None,
        "max_tokens": max_tokens,
    }
    return chosen, record


def measure(reply: Any, count: Callable[[str], int]) -> int:
    """Tokens of a reply as it is sent (unescaped JSON)."""
    return count(json.dumps(reply, ensure_ascii=False))


def fit_ids(
    reply: Any,
    ids: list[str],
    max_tokens: int,
    count: Callable[[str], int],
    *,
    copies: int = 1,
) -> int:
    """Cut ``ids`` (a list inside ``reply``, best first) in place until ``reply`` fits
    ``max_tokens``; how many were kept. ``copies``: how often the list is in the reply.

    Counts the reply without the ids, a sample of them and the result, never the whole
    long reply (counting is the cost here).
    """
    if not ids:
        return 0
    whole = list(ids)
    ids.clear()
    frame = measure(reply, count)
    sample = whole[:64]
    per_id = max(1.0, count(json.dumps(sample)) / len(sample))
    keep = max(0, min(len(whole), int((max_tokens - frame) / (per_id * copies))))
    ids.extend(whole[:keep])
    while keep and measure(reply, count) > max_tokens:
        keep = keep * 9 // 10
        del ids[keep:]
    return keep


#: The least of a text a cut item shows: fewer characters say nothing.
MIN_TEXT = 40


def _cut(
    item: dict[str, Any], count: Callable[[str], int], budget: int, max_tokens: int, rest: int
) -> dict[str, Any]:
    """``item`` with its text shortened until it fits ``budget`` (marked as cut); a
    ``max_tokens`` that cannot hold the item's fields and a little of its text is refused
    with the smallest that can (``rest``: what the reply spends besides its items)."""
    text = item.get("text")
    if not isinstance(text, str):
        return item
    shorter = dict(item, text_truncated=True)
    least = text[:MIN_TEXT]
    shorter["text"] = least
    needed = count(json.dumps(shorter, ensure_ascii=False))
    if needed > budget:
        raise InvalidInput(
            f"max_tokens {max_tokens} cannot hold one segment: its fields and the start "
            f"of its text need {needed + rest}; ask for at least that",
            field="max_tokens",
            needed=needed + rest,
        )
    low, high = len(least), len(text)
    while low < high:  # the longest prefix that fits
        middle = (low + high + 1) // 2
        shorter["text"] = text[:middle]
        if count(json.dumps(shorter, ensure_ascii=False)) <= budget:
            low = middle
        else:
            high = middle - 1
    shorter["text"] = text[:low]
    return shorter
