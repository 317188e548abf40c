"""Core's parsers: ``markdown`` (frontmatter, headings and references of ``*.md`` files),
``rst`` (reStructuredText), ``asciidoc`` and ``text`` (plain text, paragraphs as
sections)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterParser


@hookimpl
def register_parsers(register: RegisterParser) -> None:
    from cuedeck.markdown.document import parse_markdown
    from cuedeck.prose.asciidoc import parse_asciidoc
    from cuedeck.prose.plaintext import parse_text
    from cuedeck.prose.rst import parse_rst, resolves_against

    register("markdown", parse_markdown, patterns=["*.md"], deferred_counts=True)
    # reStructuredText resolves ``:doc:`` targets and its source folder against the
    # index's paths (so does plain text written in it).
    register(
        "rst", parse_rst, patterns=["*.rst", "*.rest"], deferred_counts=True,
        resolves_against=resolves_against,
    )  # fmt: skip
    register("asciidoc", parse_asciidoc, patterns=["*.adoc", "*.asciidoc"], deferred_counts=True)
    register(
        "text", parse_text, patterns=["*.txt"], deferred_counts=True,
        resolves_against=resolves_against,
    )  # fmt: skip
