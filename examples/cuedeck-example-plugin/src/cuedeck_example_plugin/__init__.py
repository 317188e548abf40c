"""An example CueDeck plugin: the ``word_count`` tool and two commands.

``cue words`` is written by hand (and takes the workspace with ``pass_workspace``);
``cue word-count`` is the tool itself, made a command by one registration call, with
the tool's own validation and errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck import hookimpl

if TYPE_CHECKING:
    from cuedeck import Workspace


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
