"""How much a client's regular expression may make the machine compile.

Regular-expression engines (Python's ``regex``, glibc's, which git uses) compile a
counted repeat by copying what it repeats: ``(?:(?:a{1000}){1000}){10}`` becomes ten
million copies, gigabytes before a single character is matched, and no match deadline
covers compiling. :func:`pattern_size` estimates the copies a pattern compiles to (nested
counts multiply, everything else adds up) without compiling it, and :func:`check_pattern`
refuses a pattern past :data:`MAX_PATTERN_SIZE` with :class:`PatternTooLarge` (1016).
Measured: a size of 100,000 compiles to about 45 MB in ``regex`` and 25 MB in git; a
million to 280 and 214 MB. The estimate errs high on purpose; a memory bound around the
process that compiles (:func:`cuedeck.system.spawn.memory_bounded`) covers what it misses.
"""

from __future__ import annotations

import re
from typing import Literal

from cuedeck.errors import PatternTooLarge

#: The largest estimated size (see the module) a pattern may compile to.
MAX_PATTERN_SIZE = 100_000
#: ``python``: the ``regex`` module (and ``re``); ``ere``: POSIX extended (git ``-G``);
#: ``bre``: POSIX basic (git ``--grep``, ``--author``), where ``\(`` groups and ``\{``
#: counts.
Syntax = Literal["python", "ere", "bre"]

_COUNT = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_BRE_COUNT = re.compile(r"\\\{(\d*)(?:(,)(\d*))?\\\}")
#: Escapes of the ``regex`` module that take a braced argument: ``\p{L}``, ``\x{263a}``,
#: ``\N{name}``, ``\g{name}`` (not a count).
_BRACED_ESCAPES = frozenset("pPNxXgku")


def pattern_size(pattern: str, syntax: Syntax = "python", *, stop_at: int | None = None) -> int:
    """The estimated number of elements ``pattern`` compiles to: each atom counts one, a
    group what it holds, and a counted repeat multiplies what it repeats by its largest
    count (``*``, ``+`` and ``?`` do not copy). Stops counting past ``stop_at``."""
    sums = [0]  # what each open group holds so far (the pattern itself at the bottom)
    last = 0  # the size of the last atom or group, which a count multiplies
    at, end = 0, len(pattern)
    while at < end:
        if stop_at is not None and sums[0] > stop_at:
            break
        char = pattern[at]
        count = (_BRE_COUNT if syntax == "bre" else _COUNT).match(pattern, at)
        if count is not None and (count.group(1) or count.group(3)):
            low, comma, high = count.groups()
            times = int(high) if high else int(low or 0)
            if comma and not high:  # {m,}: m copies and a loop
                times = max(int(low or 0), 1)
            sums[-1] += last * (max(times, 1) - 1)
            last *= max(times, 1)
            at = count.end()
            continue
        opens, closes, escape = _group_marks(pattern, at, syntax)
        if opens:
            sums.append(0)
            last = 0
            at += opens
            if syntax == "python" and pattern.startswith("?", at):
                at = _group_prefix_end(pattern, at)
            continue
        if closes:
            inner = sums.pop() if len(sums) > 1 else 0
            sums[-1] += inner
            last = inner
            at += closes
            continue
        if char == "[":
            at = _class_end(pattern, at, syntax)
        elif escape:
            at += 2
            braced = syntax == "python" and pattern[at - 1 : at] in _BRACED_ESCAPES
            if braced and pattern.startswith("{", at) and "}" in pattern[at:]:
                at = pattern.index("}", at) + 1
        else:
            at += 1
        if char in "*+?|" and not escape:
            continue  # neither an atom nor a copy
        sums[-1] += 1
        last = 1
    return sum(sums)


def _group_marks(pattern: str, at: int, syntax: Syntax) -> tuple[int, int, bool]:
    """Characters that open or close a group at ``at``, and whether an escape starts."""
    char = pattern[at]
    if char == "\\":
        following = pattern[at + 1 : at + 2]
        if syntax == "bre" and following == "(":
            return 2, 0, False
        if syntax == "bre" and following == ")":
            return 0, 2, False
        return 0, 0, True
    if syntax != "bre" and char == "(":
        return 1, 0, False
    if syntax != "bre" and char == ")":
        return 0, 1, False
    return 0, 0, False


_GROUP_PREFIX = re.compile(r"\?(?:#[^)]*|P?<(?![=!])[^>]*>|P=[^)]*|[<]?[=!]|[a-zA-Z-]*[:)>|]?)")


def _group_prefix_end(pattern: str, at: int) -> int:
    """Past what follows ``(`` in ``(?:``, ``(?P<name>``, ``(?<=``, ``(?i)``, ``(?#...``."""
    found = _GROUP_PREFIX.match(pattern, at)
    if found is None:
        return at + 1
    if found.group().startswith("?#"):
        return found.end()  # the comment's ")" closes the group it opened
    return found.end() - 1 if found.group().endswith(")") else found.end()


def _class_end(pattern: str, at: int, syntax: Syntax) -> int:
    """Where the bracket expression starting at ``at`` ends (past its ``]``)."""
    end = len(pattern)
    at += 1
    if pattern.startswith("^", at):
        at += 1
    if pattern.startswith("]", at):  # a leading ] is a member
        at += 1
    while at < end:
        char = pattern[at]
        if char == "\\" and syntax == "python":
            at += 2
            continue
        if char == "[" and pattern[at + 1 : at + 2] in (":", ".", "="):
            close = pattern.find(pattern[at + 1] + "]", at + 2)
            at = close + 2 if close >= 0 else at + 1
            continue
        if char == "]":
            return at + 1
        at += 1
    return end


def check_pattern(pattern: str, *, field: str, syntax: Syntax = "python") -> None:
    """:class:`PatternTooLarge` (1016) when ``pattern`` would compile past
    :data:`MAX_PATTERN_SIZE` (see :func:`pattern_size`)."""
    size = pattern_size(pattern, syntax, stop_at=MAX_PATTERN_SIZE)
    if size > MAX_PATTERN_SIZE:
        raise PatternTooLarge(
            f"the {field} would compile to more than {MAX_PATTERN_SIZE:,} elements: counted "
            "repeats multiply when nested ((?:a{1000}){1000} is a million)",
            field=field,
            pattern=pattern[:200],
            limit=MAX_PATTERN_SIZE,
            help="use * or + instead of large counts, or split the search in smaller patterns",
        )
