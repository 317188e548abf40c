"""What an update of a card changes, and what it did."""

from __future__ import annotations

import attrs

from cuedeck.errors import InvalidInput
from cuedeck_tasks.cards import (
    PRIORITIES,
    STATUSES,
    Card,
    check_card_label,
    check_choice,
    check_id,
    check_text,
)


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
