"""What a ref or revision argument may be: a name, never a refspec or an option.

Every branch, remote and revision argument of every git tool passes here before git sees
it. Names follow ``git check-ref-format`` (no ``..``, ``:``, ``~``, ``^``, ``?``, ``*``,
``[``, ``\\``, ``@{``, spaces or control characters; no component starting with ``.`` or
ending in ``.lock``), and may not start with ``-`` (an option) or ``+`` (a forced
refspec). A revision is such a name or a commit hash, optionally followed by ``~N`` and
``^N`` steps back (``HEAD~2``, ``main^``): enough to name any commit, and nothing git
could read as a refspec, a range, a path in a tree or a reflog query.
"""

from __future__ import annotations

import re

from cuedeck.errors import InvalidInput

MAX_LENGTH = 255
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_STEPS = re.compile(r"(?:[~^][0-9]{0,6})*$")
_HASH = re.compile(r"^[0-9a-fA-F]{4,64}$")
NAME_HELP = (
    "a name as `git check-ref-format` accepts it: no spaces, '..', '~', '^', ':', '?', '*', "
    "'[', '\\', '@{', no leading '-' or '+', no part starting with '.' or ending in '.lock'"
)


def ref_problem(name: str) -> str | None:
    """Why ``name`` is not a valid ref name (check-ref-format's rules and ours), or None."""
    if not name:
        return "it is empty"
    if len(name) > MAX_LENGTH:
        return f"it is longer than {MAX_LENGTH} characters"
    if name[0] in "-+":
        return f"it starts with {name[0]!r}, which git reads as an option or a forced refspec"
    found = _FORBIDDEN.search(name)
    if found:
        return f"it contains {found.group()!r}"
    if ".." in name or "@{" in name or name == "@":
        return "it contains '..' or '@{', or is '@'"
    if name.startswith("/") or name.endswith(("/", ".")) or "//" in name:
        return "it starts or ends with '/', ends with '.', or contains '//'"
    for part in name.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return f"its part {part!r} starts with '.' or ends in '.lock'"
    return None


def check_ref_name(name: str, *, field: str) -> str:
    """``name`` if it is a valid branch, tag or remote name, else 1004 saying why."""
    problem = ref_problem(name)
    if problem is not None:
        raise InvalidInput(f"{name!r} is not a ref name: {problem}", field=field, help=NAME_HELP)
    return name


def check_revision(value: str, *, field: str) -> str:
    """``value`` if it is a ref name or a commit hash, optionally with ``~N``/``^N`` steps
    back, else 1004: never a refspec, range, option, tree path or reflog query."""
    steps = _STEPS.search(value)
    base = value[: steps.start()] if steps else value
    problem = None if _HASH.match(base) else ref_problem(base)
    if problem is not None or not base:
        raise InvalidInput(
            f"{value!r} is not a revision: {problem or 'it names no ref'}",
            field=field,
            help="a branch, tag or commit hash, optionally with ~N or ^N (HEAD~2); " + NAME_HELP,
        )
    return value
