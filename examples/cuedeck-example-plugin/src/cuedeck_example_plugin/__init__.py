"""An example CueDeck plugin: the ``word_count`` tool, two commands and an INI parser.

``cue words`` is written by hand (and takes the workspace with ``pass_workspace``);
``cue word-count`` is the tool itself, made a command by one registration call, with
the tool's own validation and errors. The ``ini`` parser makes ``*.ini`` files part of
the index: each ``[section]`` is a section that search finds and ``read_doc`` reads by
its name.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck import hookimpl

if TYPE_CHECKING:
    from cuedeck import Workspace
    from cuedeck.models import Document
    from cuedeck.parsers import ParseContext


class WordCount(TypedDict):
    """The reply of ``word_count``."""

    path: str
    words: int
    headings: int


def word_count(workspace: Workspace, path: str) -> WordCount:
    """Count the words and headings of one markdown file in the workspace.

    ``path`` is workspace-relative, such as ``docs/guide.md``.
    """
    document = workspace.document(workspace.relative_path(path))
    text = workspace.read_text(document.path)
    return {"path": document.path, "words": len(text.split()), "headings": len(document.headings)}


def parse_ini(path: str, data: bytes, context: ParseContext) -> Document:
    """An INI file as a document: each ``[section]`` a heading spanning its keys."""
    from cuedeck.models import Document, Heading

    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    starts = [
        (number, line.strip()[1:-1].strip())
        for number, line in enumerate(lines, start=1)
        if line.strip().startswith("[") and line.strip().endswith("]")
    ]
    ends = [number - 1 for number, _ in starts[1:]] + [len(lines)]
    headings = tuple(
        Heading(level=1, text=name, slug=name.lower().replace(" ", "-"), line=number, end_line=end)
        for (number, name), end in zip(starts, ends, strict=True)
    )
    return Document(
        path=path,
        kind="file",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(lines),
        tokens=context.count_tokens(text),
        title=path.rpartition("/")[2],
        headings=headings,
        language="ini",
    )


@hookimpl
def register_parsers(register: Any) -> None:
    register("ini", parse_ini, patterns=["*.ini"])


@hookimpl
def register_tools(register: Any) -> None:
    register(word_count, category="example", read_only=True, idempotent=True)


@hookimpl
def register_commands(register: Any) -> None:
    import click

    from cuedeck_cli import pass_workspace, tool_command

    @click.command("words")
    @click.argument("path")
    @pass_workspace
    def words(workspace: Workspace, path: str) -> None:
        """Count the words of a markdown file (example plugin)."""
        result = word_count(workspace, path)
        click.echo(f"{result['path']}: {result['words']} words, {result['headings']} headings")

    register(words)
    register(tool_command("word_count"))
