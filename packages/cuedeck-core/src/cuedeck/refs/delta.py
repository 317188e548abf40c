"""Deltas: what changed in the workspace's files since a baseline, as numbered hunks.

``since`` names a baseline (a git ref, a task snapshot...) that a registered resolver
turns into the files' text then (:func:`resolve_baseline`); :func:`file_deltas` compares
each with the file now and keeps the changed ones as hunks: the lines removed and added,
:data:`CONTEXT` unchanged lines around them, and the unchanged stretches between hunks
elided (``⋮ 40 unchanged lines``). A resumed task reads what changed, not whole files::

    @@ src/shop/cart.py L10-L14 (was L10-L12): +3 -1
      10 |     def add(self, item: str, quantity: int = 1) -> None:
      11 |         \"\"\"Add ``quantity`` of ``item``.\"\"\"
    - 12 |         self.items[item] = self.items.get(item, 0) + quantity
    + 12 |         if quantity < 1:
    + 13 |             raise ValueError(quantity)
    + 14 |         self.items[item] = self.items.setdefault(item, 0) + quantity

Numbers are the file's lines now, and the old ones for removed lines.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.models import Baseline
    from cuedeck.workspace import Workspace

#: Unchanged lines shown around each change.
CONTEXT = 2


class UnknownBaseline(InvalidInput):
    """A ``since`` no registered resolver knows: not a git ref, not a task snapshot
    (1143); ``resolvers`` lists the ones asked."""

    code = 1143
    title = "Unknown Baseline"


@attrs.frozen
class FileDelta:
    """The changes of one file since the baseline: ``status`` is ``modified``,
    ``added``, ``deleted`` or ``changed`` (the text then is not known); ``text`` the
    rendered hunks; ``added``/``removed`` count lines."""

    path: str
    status: str
    text: str
    added: int
    removed: int
    spans: tuple[tuple[int, int], ...] = ()  # line ranges of the hunks, in the file now

    def summary(self) -> str:
        """``modified: +3 -1 in 2 hunks``."""
        if self.status in ("modified", "added", "deleted"):
            hunks = (
                f" in {len(self.spans)} hunk{'s' * (len(self.spans) != 1)}" if self.spans else ""
            )
            return f"{self.status}: +{self.added} -{self.removed}{hunks}"
        return "changed (its earlier text is not known)"


def resolve_baseline(workspace: Workspace, since: str) -> Baseline:
    """The baseline ``since`` names, by the first registered resolver that knows it;
    UnknownBaseline (1143) when none does."""
    from cuedeck.plugins.host import get_baselines

    wanted = since.strip()
    if not wanted or len(wanted) > 256 or any(ord(ch) < 32 for ch in wanted):
        raise InvalidInput(f"{since!r} is not a baseline name", field="since")
    resolvers = get_baselines(workspace.plugins)
    for resolver in resolvers.values():
        found = resolver(workspace, wanted)
        if found is not None:
            return found
    names = ", ".join(sorted(resolvers)) or "none installed"
    raise UnknownBaseline(
        f"since {wanted!r} names no baseline: not a git commit, branch or tag, nor a task "
        f"snapshot (resolvers: {names})",
        field="since",
        resolvers=sorted(resolvers),
        help="pass a git ref (HEAD~3, main, a tag) or the id of a task snapshot",
    )


def file_deltas(
    workspace: Workspace, baseline: Baseline, paths: Iterable[str] | None = None
) -> list[FileDelta]:
    """The files of ``baseline`` (or of ``paths`` among them) that differ now, in path
    order: each as hunks (see the module docstring). Only indexed files are read now; a
    file the baseline had that the index no longer holds is ``deleted``."""
    from cuedeck.errors import CueError
    from cuedeck.layout import protection

    wanted = sorted(baseline.files if paths is None else set(paths) & set(baseline.files))
    documents = workspace.documents
    found: list[FileDelta] = []
    for path in wanted:
        then = baseline.files[path]
        now: str | None = None
        if path in documents:
            try:
                now = workspace.snapshot(path).text
            except CueError:
                continue  # unreadable now: not part of what a scene may show
        elif (
            protection(path, write=False, places=workspace.places) is not None
            or workspace.parsers.claim(path) is None
            or (workspace.root / path).exists()
        ):
            continue  # never indexed (or left out of the index): not the workspace's
        if not then.known:
            if now is not None:
                found.append(FileDelta(path, "changed", "", 0, 0))
            continue
        if then.text == now or (then.text is None and now is None):
            continue
        found.append(diff_file(path, then.text, now))
    return found


def diff_file(path: str, before: str | None, after: str | None) -> FileDelta:
    """The hunks turning ``before`` into ``after`` (None: the file did not exist)."""
    old = _lines(before)
    new = _lines(after)
    if after is None:
        return FileDelta(path, "deleted", f"deleted: it had {len(old)} lines", 0, len(old))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    added = removed = 0
    shown_to = 0  # lines of ``new`` up to here are shown or elided already
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first_new, last_new = group[0][3], group[-1][4]
        first_old, last_old = group[0][1], group[-1][2]
        if first_new > shown_to and out:
            out.append(f"⋮ {first_new - shown_to} unchanged lines")
        plus = sum(j2 - j1 for tag, _, _, j1, j2 in group if tag != "equal")
        minus = sum(i2 - i1 for tag, i1, i2, _, _ in group if tag != "equal")
        added, removed = added + plus, removed + minus
        now_span = _span(first_new + 1, last_new)
        was = _span(first_old + 1, last_old)
        header = f"@@ {path} {now_span}"
        if was != now_span:
            header += f" (was {was})"
        out.append(f"{header}: +{plus} -{minus}")
        spans.append((first_new + 1, max(first_new + 1, last_new)))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f"  {j1 + k + 1:>4} | {new[j1 + k]}" for k in range(j2 - j1))
                continue
            out.extend(f"- {i1 + k + 1:>4} | {old[i1 + k]}" for k in range(i2 - i1))
            out.extend(f"+ {j1 + k + 1:>4} | {new[j1 + k]}" for k in range(j2 - j1))
        shown_to = last_new
    if out and shown_to < len(new):
        out.append(f"⋮ {len(new) - shown_to} unchanged lines")
    status = "added" if before is None else "modified"
    return FileDelta(path, status, "\n".join(out), added, removed, tuple(spans))


def _lines(text: str | None) -> list[str]:
    from cuedeck.text import split_lines

    return split_lines(text) if text else []


def _span(first: int, last: int) -> str:
    if last < first:
        return f"L{first} (none)" if first > 1 else "L1 (none)"
    return f"L{first}" if first == last else f"L{first}-L{last}"
