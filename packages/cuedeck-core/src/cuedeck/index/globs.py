"""Gitignore-style patterns: ``[index]`` globs, ``.gitignore`` files, client patterns.

One bad line must not break every walk: a line git would not use, or one too slow to
match, is skipped and reported (:func:`pattern_problem`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from cuedeck.models import Problem

#: Most single ``*`` wildcards one pattern may hold. Patterns become regular expressions
#: that backtrack: each ``*`` more multiplies the time of matching a long file name (a
#: 255-character name: 26 ms with three, 3.5 s with four, minutes with six). A client can
#: write a ``.gitignore`` and name a file, so a pattern with more is skipped.
MAX_WILDCARDS = 3


#: Problem code of a ``.gitignore`` line skipped (InvalidPattern); see docs/errors.md.
INVALID_PATTERN = 1017


_WILDCARD = re.compile(r"(?<![*\\])\*(?!\*)")


def pattern_problem(line: str) -> str | None:
    """Why the gitignore-style ``line`` cannot be used (invalid, or too many wildcards),
    or None; blank lines and comments are fine."""
    import pathspec

    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if len(_WILDCARD.findall(text)) > MAX_WILDCARDS:
        return f"more than {MAX_WILDCARDS} * wildcards (matching it could take minutes)"
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error) as exc:
        return f"not a valid pattern ({exc})"
    return None


class Globs:
    """Gitignore-style patterns, matched as one regular expression when none negates.

    pathspec tries each pattern in turn; one alternation is several times faster, which
    matters when every refresh matches every path of a large workspace. A line git would
    not use, or one too slow to match (:func:`pattern_problem`), is skipped and listed in
    ``invalid`` as ``(line number, line, why)``: one bad ``.gitignore`` line must not
    break every walk (git skips invalid lines too).
    """

    def __init__(self, lines: list[str]) -> None:
        # Imported here: listing cards imports the walk (for ``inside``), and so this
        # module, but matches no globs.
        import pathspec

        self.invalid: list[tuple[int, str, str]] = []
        if any(_WILDCARD.search(line) for line in lines):
            lines = self._usable(lines)
        try:
            self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, re.error):
            lines = self._usable(lines)
            self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        rules = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        #: Every rule names folders only (``dist/``): a walk that pruned those folders
        #: need not test the files it finds (most rules of a large tree are like this).
        self.folders_only = all(r.endswith("/") and not r.startswith("!") for r in rules)
        patterns = [p for p in self.spec.patterns if p.include is not None]
        self.regex: re.Pattern[str] | None = None
        if patterns and all(p.include and p.regex is not None for p in patterns):
            alternatives = (
                p.regex.pattern.replace("(?P<ps_d>", "(?:") for p in patterns if p.regex
            )
            self.regex = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def _usable(self, lines: list[str]) -> list[str]:
        """``lines`` without those :func:`pattern_problem` refuses (noted in ``invalid``)."""
        kept = []
        for number, line in enumerate(lines, 1):
            why = pattern_problem(line)
            if why is None:
                kept.append(line)
            elif not any(number == seen for seen, _, _ in self.invalid):
                self.invalid.append((number, line, why))
        return kept

    @classmethod
    def of_arguments(cls, globs: list[str], *, field: str) -> Globs:
        """``globs`` a client passed: InvalidInput (1004) naming the first unusable one."""
        from cuedeck.errors import InvalidInput

        found = cls(globs)
        if found.invalid:
            _, line, why = found.invalid[0]
            raise InvalidInput(
                f"{field}: {line!r} is {why}",
                field=field,
                help="gitignore syntax: * within a name, ** across folders, [a-z] a class",
            )
        return found

    def problems(self, path: str) -> list[Problem]:
        """Doctor warnings for the lines of the file ``path`` that were skipped."""
        return [
            Problem(
                "warning",
                INVALID_PATTERN,
                path,
                number,
                f"pattern {line.strip()!r} skipped: {why}",
                "fix or remove the line (git skips an invalid line as well)",
            )
            for number, line, why in self.invalid
        ]

    def match(self, path: str) -> bool:
        """Whether ``path`` (a directory when it ends in ``/``) matches."""
        if self.regex is not None:
            return self.regex.match(path) is not None
        return self.spec.match_file(path)

    def match_found_file(self, path: str) -> bool:
        """:meth:`match` for a file whose folders were already tested."""
        return not self.folders_only and self.match(path)


def globs_of(patterns: list[str]) -> Globs | None:
    """:class:`Globs` of ``patterns``, or None when there are none."""
    return Globs(patterns) if patterns else None


def gitignore(path: Path) -> Globs | None:
    """The patterns of the ``.gitignore`` at ``path`` (cached while unchanged), or None."""
    return _gitignore(path)


def ignored(rel: str, ignores: list[tuple[str, Globs]], *, files: bool = False) -> bool:
    """Whether one of ``ignores`` (``(folder, patterns)`` of each ``.gitignore`` from the
    root down) ignores ``rel`` (a folder when it ends in ``/``); ``files``: a file whose
    folders were tested already."""
    return _ignored(rel, ignores, files=files)


def _gitignore(path: Path) -> Globs | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return _gitignore_globs(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=256)
def _gitignore_globs(path: str, mtime_ns: int, size: int) -> Globs | None:
    """The patterns of one .gitignore, cached while the file is unchanged."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return Globs(text.splitlines())


def _ignored(rel: str, ignores: list[tuple[str, Globs]], *, files: bool = False) -> bool:
    """Whether a .gitignore on the way ignores ``rel``; ``files``: a file found by a walk
    that tested its folders already."""
    for base, spec in ignores:
        local = rel[len(base) + 1 :] if base else rel
        if spec.match_found_file(local) if files else spec.match(local):
            return True
    return False
