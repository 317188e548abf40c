"""A tool's reply as it is sent: text for a model, structured content for programs, and
what the two cost against a budget.

A reply leaves a server in two forms (MCP ``content`` and ``structuredContent``):

- :func:`reply_text`, what a model reads: ``key: value`` lines, with text and code as
  they are, in fenced blocks, never escaped as JSON strings (an escaped newline and
  quote cost tokens, and code read through escapes is harder to read);
- :func:`structured`, the JSON object programs read (a list or a scalar is wrapped as
  ``{"result": ...}``).

Clients hand their model one of the two (most the text; some the structured content
when there is one), so a reply fits a budget when both do: :func:`reply_tokens` counts
the larger, masked as it will be sent. A tool that takes a budget builds its reply
with :func:`fit_reply`, the one way every budgeted reply is held to its limit.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

from cuedeck.errors import TokenLimitExceeded

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.workspace import Workspace

T = TypeVar("T")

#: Replies made, at most, in search of the largest budget whose reply fits.
ATTEMPTS = 10
#: The shortest run of backticks that fences a text block.
FENCE = 3
_BACKTICKS = re.compile(r"^[ \t]*(`{3,})", re.MULTILINE)


# -- the two forms -----------------------------------------------------------------------


def structured(value: Any) -> dict[str, Any]:
    """``value`` as structured content: an object, anything else wrapped in ``result``."""
    return value if isinstance(value, dict) else {"result": value}


def compact_json(value: Any) -> str:
    """``value`` as JSON the way replies are sent: no spaces, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def reply_text(value: Any, reads_as: str | None = None) -> str:
    """``value`` (JSON-like) as a model reads it.

    ``reads_as`` names a field of a tool's reply that already says in lines for a model
    what its lists hold (a tool registered with ``reads_as=``): the model reads that
    text after the reply's short fields, and the lists are not drawn again.

    An object is one ``key: value`` line a field, ``null`` fields left out (a reply's
    structured content still has them); what holds no text of several lines and no list
    of objects stays on its line (a string as it is, the rest as compact JSON).
    Multi-line text follows its line in a fenced block, after the short fields. A list
    of flat objects (search results, cards) is a table, one ``|``-separated row each
    under a row of the keys; other lists of objects are ``- `` items, each with its
    short fields as compact JSON. A string reply is the string itself. A ``reflects``
    block (:mod:`cuedeck.watch.reflects`) is its one line, last.
    """
    from cuedeck.watch.reflects import reply_line

    if isinstance(value, str):
        return value
    if reads_as is not None and isinstance(value, dict) and isinstance(value.get(reads_as), str):
        return _read_as(value, reads_as)
    lines: list[str] = []
    if isinstance(value, dict):
        line = reply_line(value)
        _fields({k: v for k, v in value.items() if k != "reflects"} if line else value, lines, "")
        if line:
            lines.append(line)
    elif isinstance(value, list) and _is_block(value):
        _items(value, lines, "")
    else:
        lines.append(_inline(value))
    return "\n".join(lines)


def _read_as(value: dict[str, Any], field: str) -> str:
    """The short fields of ``value`` (paging, counts, notes), then its ``field`` text as it
    is, then its ``reflects`` line: what lists and tables hold, the text already says."""
    from cuedeck.watch.reflects import reply_line

    line = reply_line(value)
    lines = [
        f"{key}: {_inline(item)}"
        for key, item in value.items()
        if key not in (field, "reflects") and item is not None and not _is_block(item)
    ]
    lines.append(value[field])
    if line:
        lines.append(line)
    return "\n".join(lines)


def _is_block(value: Any) -> bool:
    """Whether ``value`` takes lines of its own (else it fits after ``key: ``)."""
    if isinstance(value, str):
        return "\n" in value or "\r" in value
    if isinstance(value, dict):
        return any(_is_block(v) for v in value.values())
    if isinstance(value, list):
        return any(isinstance(item, dict) or _is_block(item) for item in value)
    return False


def _inline(value: Any) -> str:
    if isinstance(value, str) and value and value == value.strip():
        return value
    return compact_json(value)


def _fields(value: dict[str, Any], lines: list[str], indent: str) -> None:
    """An object's fields, a ``key: value`` line each, then those that take lines."""
    shown = [(str(key), item) for key, item in value.items() if item is not None]
    if not shown:
        lines.append(f"{indent}{{}}")
    for key, item in shown:
        if not _is_block(item):
            lines.append(f"{indent}{key}: {_inline(item)}")
    _blocks(value, lines, indent)


def _blocks(value: dict[str, Any], lines: list[str], indent: str) -> None:
    """An object's fields that take lines of their own, each under a ``key:`` line."""
    for key, item in value.items():
        if item is None or not _is_block(item):
            continue
        lines.append(f"{indent}{key}:")
        if isinstance(item, str):
            lines.extend(_fenced(item))
        elif isinstance(item, dict):
            _fields(item, lines, indent + "  ")
        else:
            _items(item, lines, indent)


def _items(value: list[Any], lines: list[str], indent: str) -> None:
    """A list: a table of flat objects; else an item each, an object's short fields as
    one compact JSON line (its keys cost what they cost in JSON, without a line each)."""
    if value and all(isinstance(i, dict) and i and not _is_block(i) for i in value):
        _table(value, lines, indent)
        return
    for item in value:
        if isinstance(item, dict):
            short = {k: v for k, v in item.items() if v is not None and not _is_block(v)}
            lines.append(f"{indent}- {compact_json(short)}" if short else f"{indent}-")
            _blocks(item, lines, indent + "  ")
        elif isinstance(item, str) and _is_block(item):
            lines.append(f"{indent}-")
            lines.extend(_fenced(item))
        elif isinstance(item, list) and _is_block(item):
            lines.append(f"{indent}-")
            _items(item, lines, indent + "  ")
        else:
            lines.append(f"{indent}- {_inline(item)}")


def _table(rows: list[dict[str, Any]], lines: list[str], indent: str) -> None:
    """Flat objects as a table: the keys (in order of first use) once, then a row each
    (an empty cell for a missing or null field); a key costs its tokens once, not per row."""
    keys = list(dict.fromkeys(k for row in rows for k, v in row.items() if v is not None))
    lines.append(indent + " | ".join(map(str, keys)))
    for row in rows:
        cells = ("" if row.get(k) is None else _inline(row[k]) for k in keys)
        lines.append(indent + " | ".join(cell.replace("|", "\\|") for cell in cells))


def _fenced(text: str) -> list[str]:
    """``text`` between fences longer than any backtick fence inside it."""
    longest = max((len(m.group(1)) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(FENCE, longest + 1)
    body = text[:-1] if text.endswith("\n") else text
    return [fence, body, fence]


# -- what it costs -----------------------------------------------------------------------


def reply_size(value: Any, count: Callable[[str], int]) -> int:
    """Tokens of ``value`` as sent, by ``count``: the larger of its two forms."""
    return max(count(reply_text(value)), count(compact_json(structured(value))))


def reply_tokens(workspace: Workspace, value: Any) -> int:
    """Tokens of ``value`` as the tool being served would send it: masked (knowing the
    secrets its request sent), by the workspace's counter, the larger of its two forms."""
    import pydantic_core

    from cuedeck.plugins.tools import CURRENT_CALL
    from cuedeck.serving.calls import learned, request_masking

    call = CURRENT_CALL.get()
    # What the served reply's session knows (the secrets a tool masked and learned from
    # its request), in a copy: measuring a draft numbers no placeholder of the reply.
    served = request_masking(workspace)
    session = served.fork() if served is not None else workspace.mask_session()
    learned(session, call.arguments if call else None)
    plain = pydantic_core.to_jsonable_python(value, fallback=str)
    return reply_size(session.mask_json(plain), workspace.count_tokens)


def fit_reply(
    workspace: Workspace, limit: int, make: Callable[[int], T], *, written: bool = False
) -> T:
    """``make(budget)``'s reply, whole within ``limit`` tokens (:func:`reply_tokens`).

    ``make`` builds the reply with its main content (a page, a scene, a list of
    segments) fitted to ``budget``. The first try gives it all of ``limit``. A reply
    over it is made again with a smaller budget, found as a line through the sizes seen
    (what a reply adds around its content is partly fixed, partly in proportion: JSON
    escapes, each item's fields), or halfway when that says nothing; a reply within a
    thirty-second of ``limit`` (or of the smallest budget known to be over) is taken.
    Only what can be made again belongs in ``make``: a tool writes before.
    TokenLimitExceeded (1003) when no budget gives a reply that fits, with the least the
    reply needed; but a tool that ``written`` must say what it wrote, so it gets the
    reply made with the least budget.
    """
    close = max(1, limit // 32)
    budget = limit
    fitting: tuple[int, T] | None = None  # the largest budget known to fit, and its reply
    over = limit + 1  # the smallest budget known not to fit
    seen: list[tuple[int, int]] = []  # (budget, size) of each reply made
    for _ in range(ATTEMPTS):
        try:
            reply = make(budget)
        except TokenLimitExceeded as exc:
            if budget == limit:
                raise
            raise _too_large(limit, exc.data.get("current_size"), limit - budget) from None
        size = reply_tokens(workspace, reply)
        if size <= limit:
            if budget == limit or size >= limit - close or over - budget <= close:
                return reply
            fitting = (budget, reply)
        else:
            over = budget
        seen.append((budget, size))
        low = fitting[0] if fitting is not None else 0
        budget = _next_budget(seen, limit, low, over)
        if budget <= low:
            break
    if fitting is not None:
        return fitting[1]
    if written:
        return make(1)
    raise _too_large(limit, min(size for _, size in seen), 0)


def _next_budget(seen: list[tuple[int, int]], limit: int, low: int, over: int) -> int:
    """The budget to try next, strictly between ``low`` (fits) and ``over`` (does not):
    where the line through the last two replies reaches ``limit`` (through the origin
    after one reply), else halfway. Two replies over the limit of the same size mean
    the content moves in steps there (whole lines, whole items): halves from then on."""
    sizes = [size for _, size in seen if size > limit]
    if len(sizes) != len(set(sizes)):
        return (low + over) // 2
    (b1, s1), (b2, s2) = ((0, 0), seen[0]) if len(seen) == 1 else seen[-2:]
    guess = low
    if b1 != b2 and s1 != s2:
        slope = (s2 - s1) / (b2 - b1)
        if slope > 0:
            guess = int(b2 + (limit - s2) / slope) - 1
    return guess if low < guess < over else (low + over) // 2


def _too_large(limit: int, needed: Any, around: int) -> TokenLimitExceeded:
    """The refusal of a reply that does not fit ``limit`` (``needed`` tokens of content,
    ``around`` more for the rest of the reply)."""
    need = (needed if isinstance(needed, int) else limit) + around
    return TokenLimitExceeded(
        f"the reply does not fit {limit} tokens: it needs about {need}",
        current_size=need,
        limit=limit,
        action=f"ask for a budget of at least {need} tokens",
        help=f"ask for a budget of at least {need} tokens",
    )
