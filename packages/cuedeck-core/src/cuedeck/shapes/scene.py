"""What a scene is made of: candidate items, items a scene source adds, and what a
pruner placed."""

from __future__ import annotations

import attrs


@attrs.frozen
class SceneItem:
    """A candidate of a scene: a whole file or one section (``anchor``, a heading slug or
    a symbol's qualified name).

    ``priority`` is 100 for the active card, 50 for its direct references, 45 for the
    changes since a baseline, 25 for indirect references, 22 for related code and 10
    for global docs; ``depth`` is the reference distance from the card (-1 for what
    nothing refers to); ``role`` names the level (``card``, ``direct``, ``delta``,
    ``indirect``, ``related``, ``global``...). ``text`` is masked already; ``tokens`` is what
    it costs in the scene (with its per-document framing); ``sha256`` is of the file.
    """

    path: str
    anchor: str | None
    priority: int
    depth: int
    text: str
    tokens: int
    sha256: str
    role: str = "direct"
    title: str = ""
    #: The language of a code item (``python``...) or of prose other than markdown
    #: (``rst``, ``asciidoc``, ``plaintext``: its fence); None for markdown.
    language: str | None = None
    #: The lines of the file the text holds (1-based, inclusive), for code and sections.
    lines: tuple[int, int] | None = None
    #: Smaller forms of a code item, largest first (its signatures with docstring
    #: summaries, then its outermost signature), masked: what ``signatures`` places.
    signatures: tuple[str, ...] = ()
    #: ``(outline, headings only)`` of prose the outline pruner cannot read as markdown
    #: (reStructuredText, AsciiDoc, plain text), made from its headings; empty otherwise.
    outlines: tuple[str, ...] = ()
    #: How the text is placed when kept as it is: "" for whole or section, else the form
    #: it already has (``signatures`` for related code compressed to fit its share).
    form: str = ""
    #: What the manifest adds about it (a reference's drift label, why related code was
    #: chosen).
    note: str = ""

    @property
    def key(self) -> str:
        """``path`` or ``path#anchor``: the node label in the reference graph."""
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


@attrs.frozen
class SceneExtra:
    """An item a scene source adds to a scene: text from workspace file ``path``, or an
    item that is no file (a plugin's record), named by ``path`` and hashed by its source.

    ``sha256`` is of the file's bytes, or the source's own hash of an item that is no
    file (what ``cue scene --check`` compares, asking the sources again); ``text`` is
    what the scene shows (masked by the scene); ``priority`` orders it among the levels
    of :class:`SceneItem` (40 unless the source says: between direct references, 50,
    and indirect ones, 25) and ``role`` names it in the manifest.
    """

    path: str
    title: str
    text: str
    sha256: str
    priority: int = 40
    role: str = "extra"


@attrs.frozen
class Placement:
    """What a pruner did with a scene item: ``whole``, ``section``, ``outline`` or ``dropped``.

    ``text`` is what goes into the scene (empty when dropped), ``tokens`` its cost as
    counted by the pruner's ``count``, ``reason`` why it was not kept in full.
    """

    item: SceneItem
    mode: str
    text: str
    tokens: int
    reason: str | None = None
