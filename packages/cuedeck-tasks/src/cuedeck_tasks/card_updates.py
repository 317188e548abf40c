"""What an update of a card changes, what it did, and the card's text edited by it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import Conflict, InvalidInput
from cuedeck.layout import card_path
from cuedeck.text import decode, split_lines
from cuedeck_tasks.cardfile import DELETE, append_note, edit_frontmatter
from cuedeck_tasks.cards import (
    PRIORITIES,
    STATUSES,
    Card,
    check_card_label,
    check_choice,
    check_id,
    check_text,
    utc_now,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_tasks.graph import TaskGraph


@attrs.frozen
class CardChanges:
    """What an update changes. ``assignee=""`` unassigns; ``note`` is appended."""

    title: str | None = None
    status: str | None = None
    priority: str | None = None
    assignee: str | None = None
    note: str | None = None
    add_tags: tuple[str, ...] = ()
    remove_tags: tuple[str, ...] = ()
    add_depends_on: tuple[str, ...] = ()
    remove_depends_on: tuple[str, ...] = ()
    add_refs: tuple[str, ...] = ()
    remove_refs: tuple[str, ...] = ()

    #: Fields set outright: an update from an old ``base`` conflicts on these.
    SCALARS = ("title", "status", "priority", "assignee")

    def check(self) -> CardChanges:
        """Self, or InvalidInput naming the first bad field."""
        if self.title is not None:
            check_card_label(self.title, field="title")
        if self.status is not None:
            check_choice(self.status, STATUSES, field="status")
        if self.priority is not None:
            check_choice(self.priority, PRIORITIES, field="priority")
        if self.assignee is not None:
            check_card_label(self.assignee, field="assignee", allow_empty=True)
        if self.note is not None:
            check_text(self.note, field="notes")
        for tag in (*self.add_tags, *self.remove_tags):
            check_card_label(tag, field="tags")
        for dep in (*self.add_depends_on, *self.remove_depends_on):
            check_id(dep, field="depends_on")
        for ref in self.add_refs:
            check_ref(ref)
        for field, added, removed in (
            ("tags", self.add_tags, self.remove_tags),
            ("depends_on", self.add_depends_on, self.remove_depends_on),
            ("refs", self.add_refs, self.remove_refs),
        ):
            both = sorted(set(added) & set(removed))
            if both:
                raise InvalidInput(
                    f"{', '.join(map(repr, both))} would be both added to and removed from {field}",
                    field=field,
                )
        if self == CardChanges():
            raise InvalidInput("nothing to update: name at least one field", field="updates")
        return self


def check_ref(spec: str) -> str:
    """``spec`` if it is a ``refs:`` entry (``doc/api#Login``, ``code/src/x.py#Cart.add``),
    else InvalidInput (1004)."""
    from cuedeck.markdown.document import parse_ref_spec

    check_card_label(spec, field="refs")
    if not spec.strip() or parse_ref_spec(spec) is None:
        raise InvalidInput(
            f"{spec!r} is not a reference: write doc/NAME, card/ID, a path.md or "
            "code/PATH#Symbol (code/PATH#L120-L180 for lines)",
            field="refs",
        )
    return spec.strip()


@attrs.frozen
class Updated:
    """The result of an update: the card as written and the fields that changed."""

    card: Card
    fields: tuple[str, ...]


def check_overlap(card_id: str, changes: CardChanges, base: Card, current: Card, sha: str) -> None:
    """Conflict (1005) when a field ``changes`` sets was changed by someone else since
    ``base`` was read (``current``, whose sha256 is ``sha``), to another value."""
    clashing = []
    for name in CardChanges.SCALARS:
        wanted = getattr(changes, name)
        if name == "assignee" and wanted == "":
            wanted = None  # unassigning: the card has no assignee afterwards
        elif wanted is None:
            continue
        theirs = getattr(current, name)
        # A field someone else changed clashes, unless they set what we want anyway.
        if theirs != getattr(base, name) and theirs != wanted:
            clashing.append(name)
    if clashing:
        raise Conflict(
            f"{card_path(card_id)} changed since it was read: "
            f"{', '.join(clashing)} {'was' if len(clashing) == 1 else 'were'} "
            "set by someone else",
            path=card_path(card_id),
            expected_hash=base.sha256,
            current_hash=sha,
            fields=clashing,
            help="read the card again and retry",
        )


def edited_text(
    card_id: str,
    data: bytes,
    current: Card,
    changes: CardChanges,
    graph: Callable[[], TaskGraph],
) -> tuple[str, tuple[str, ...]] | None:
    """The card file ``data`` (parsed: ``current``) with ``changes`` applied, and the
    fields they set; None when they change nothing. ``graph`` checks new dependencies."""
    text, replaced = decode(data)
    if replaced:
        raise InvalidInput(
            f"{card_path(card_id)} is not valid UTF-8; fix it before updating the card",
            path=card_path(card_id),
            field="card",
        )
    if data.startswith(b"\xef\xbb\xbf"):
        text = "\ufeff" + text
    touched = [name for name in CardChanges.SCALARS if getattr(changes, name) is not None]
    touched += ["tags"] * bool(changes.add_tags or changes.remove_tags)
    touched += ["depends_on"] * bool(changes.add_depends_on or changes.remove_depends_on)
    touched += ["refs"] * bool(changes.add_refs or changes.remove_refs)
    broken = [name for name in touched if name in current.malformed]
    if broken:
        lines = split_lines(text)
        where = next(
            (n for n, line in enumerate(lines, 1) if line.startswith(f"{broken[0]}:")), None
        )
        raise InvalidInput(
            f"{', '.join(broken)} has a value of the wrong type in the file",
            path=card_path(card_id),
            line=where,
            field=broken[0],
            problems=[p for p in current.problems if p.startswith(tuple(broken))],
            help=f"fix {broken[0]} in the file by hand, then update the card",
        )
    frontmatter: dict[str, Any] = {}
    fields: list[str] = []
    for name in CardChanges.SCALARS:
        wanted = getattr(changes, name)
        if wanted is None:
            continue
        if name == "assignee" and not wanted:
            if current.assignee is not None:
                frontmatter[name] = DELETE
                fields.append(name)
        elif getattr(current, name) != wanted:
            frontmatter[name] = wanted
            fields.append(name)
    tags = [t for t in current.tags if t not in changes.remove_tags]
    tags += [t for t in changes.add_tags if t not in tags]
    if tags != list(current.tags):
        frontmatter["tags"] = tags
        fields.append("tags")
    deps = [d for d in current.depends_on if d not in changes.remove_depends_on]
    added = [d for d in dict.fromkeys(changes.add_depends_on) if d not in deps]
    if added:
        graph().check_new_dependencies(card_id, added, writing=card_path(card_id))
    deps += added
    if deps != list(current.depends_on):
        frontmatter["depends_on"] = deps
        fields.append("depends_on")
    # "@code/x" and "code/x" are one reference: compare them without the "@".
    dropped = {ref.strip().removeprefix("@") for ref in changes.remove_refs}
    refs = [r for r in current.refs if r.removeprefix("@") not in dropped]
    have = {r.removeprefix("@") for r in refs}
    for ref in changes.add_refs:
        if ref.strip().removeprefix("@") not in have:
            refs.append(ref.strip())
            have.add(ref.strip().removeprefix("@"))
    if refs != list(current.refs):
        frontmatter["refs"] = refs if refs else DELETE
        fields.append("refs")
    if not fields and changes.note is None:
        return None
    now = utc_now()
    frontmatter["updated"] = now
    edited = edit_frontmatter(text, frontmatter, path=card_path(card_id))
    if changes.note is not None:
        newline = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
        edited = append_note(edited, changes.note, now, newline=newline)
        fields.append("notes")
    return edited, tuple(fields)
