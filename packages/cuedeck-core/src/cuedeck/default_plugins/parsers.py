"""Core's parser: ``markdown`` (frontmatter, headings and references of ``*.md`` files)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterParser


@hookimpl
def register_parsers(register: RegisterParser) -> None:
    from cuedeck.markdown.document import parse_markdown

    register("markdown", parse_markdown, patterns=["*.md"], deferred_counts=True)
