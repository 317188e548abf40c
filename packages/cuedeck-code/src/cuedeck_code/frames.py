"""Stack frames out of an error's text: a traceback, a panic, failing test output.

Each format names a file and a line; :func:`frames` finds them in any text (a card's
body, a pasted log) in the order written, and :func:`resolve` maps each file onto the
workspace (an absolute path or a Java class name ends with an indexed path). Formats:

- Python: ``File "/srv/app/shop/cart.py", line 12, in add``; pytest's
  ``shop/cart.py:12: in add`` and ``shop/cart.py:12: ValueError``;
- JavaScript and Node: ``at add (/srv/app/src/cart.js:12:5)``, ``at /srv/app/x.js:3:1``;
- Go: a tab, then ``/home/u/shop/cart.go:12 +0x1d``;
- Rust: ``at ./src/cart.rs:12:5`` in a backtrace, ``panicked at src/cart.rs:12:5``;
- Java (and Kotlin): ``at com.acme.shop.Cart.add(Cart.java:12)``.

Where the error was raised matters most: Python and pytest write the innermost frame
last, the others first; :attr:`Frame.depth` counts from it (0 is where it was raised).
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_PATH = r"[^\s\"'():]+"
_FORMATS = (
    # (format, pattern with groups path and line, innermost frame written last)
    ("python", r'File "(?P<path>[^"]+)", line (?P<line>\d+)', True),
    (
        "pytest",
        rf"^(?P<path>{_PATH}\.\w+):(?P<line>\d+): (?:in \w|\w+(?:Error|Exception)\b)",
        True,
    ),
    (
        "java",
        r"\bat (?P<class>[\w$.]+)\.[\w$<>]+"
        r"\((?P<path>[\w$]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)",
        False,
    ),
    (
        "node",
        rf"\bat (?:.+? \()?(?P<path>(?:file://)?{_PATH}\.[cm]?[jt]sx?):(?P<line>\d+):\d+\)?",
        False,
    ),
    ("rust", rf"(?:\bat|panicked at) (?P<path>{_PATH}\.rs):(?P<line>\d+):\d+", False),
    ("go", rf"^\t(?P<path>{_PATH}\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$", False),
)
_PATTERNS = tuple((name, re.compile(pattern, re.M), last) for name, pattern, last in _FORMATS)


@attrs.frozen
class Frame:
    """A frame of a stack: a file as written, a line, and how far from the error."""

    path: str
    line: int
    depth: int
    format: str
    hint: str = ""  # a Java frame's class: com.acme.shop.Cart -> com/acme/shop/Cart.java


def frames(text: str) -> list[Frame]:
    """The stack frames written in ``text``, each stack's innermost frame at depth 0."""
    found: list[tuple[int, str, str, int, str, bool]] = []
    taken: list[tuple[int, int]] = []
    for name, pattern, last_is_inner in _PATTERNS:
        for match in pattern.finditer(text):
            span = match.span()
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue  # one frame, read by an earlier format
            taken.append(span)
            hint = match.groupdict().get("class") or ""
            path = match.group("path").removeprefix("file://")
            found.append((span[0], name, path, int(match.group("line")), hint, last_is_inner))
    found.sort()
    result: list[Frame] = []
    # Frames of one format written one after another make one stack.
    group: list[tuple[int, str, str, int, str, bool]] = []
    for item in [*found, None]:
        if item is not None and (not group or group[-1][1] == item[1]):
            group.append(item)
            continue
        total = len(group)
        for position, (_, name, path, line, hint, last_is_inner) in enumerate(group):
            depth = total - 1 - position if last_is_inner else position
            result.append(Frame(path, line, depth, name, hint))
        group = [item] if item is not None else []
    return result


def resolve(
    frame: Frame, paths: Iterable[str], by_name: Mapping[str, list[str]] | None = None
) -> str | None:
    """The indexed path ``frame`` names: the path itself, else the indexed path it ends
    with (longest first: ``/srv/app/shop/cart.py`` is ``shop/cart.py``)."""
    known = paths if isinstance(paths, (set, frozenset, dict)) else set(paths)
    written = frame.path.replace("\\", "/")
    if frame.hint:
        package = frame.hint.rpartition(".")[0].replace(".", "/")
        written = f"{package}/{written}" if package else written
    clean = posixpath.normpath(written).lstrip("/")
    clean = clean.removeprefix("./")
    if clean in known:
        return clean
    if by_name is None:
        by_name = paths_by_name(known)
    candidates = by_name.get(posixpath.basename(clean), [])
    best: tuple[int, str] | None = None
    for candidate in candidates:
        if clean.endswith("/" + candidate) or clean == candidate:
            score = len(candidate)
        elif candidate.endswith("/" + clean):
            score = len(clean)  # the frame gives less of the path than the index has
        else:
            continue
        if best is None or score > best[0]:
            best = (score, candidate)
    return best[1] if best else None


def paths_by_name(paths: Iterable[str]) -> dict[str, list[str]]:
    """File name -> the indexed paths with that name."""
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(posixpath.basename(path), []).append(path)
    return found
