"""An example CueDeck plugin: what a third party can add, one hook each.

- ``register_settings``: the ``[example]`` config section (:mod:`.settings`).
- ``register_tools``: the ``word_count`` tool, rate limited per MCP client, which raises
  the plugin's own error (:mod:`.errors`, code 1040) for a doc under ``min_words``.
- ``register_commands``: ``cue words``, written by hand (it takes the workspace with
  ``pass_workspace``), and ``cue word-count``, the tool itself made a command by one call.
- ``register_maskers``, marked ``tryfirst``: the masker of the example service's keys
  (``exk_...``). Pluggy calls it before core's, so where a generic built-in rule matches
  the same secret, this rule names it: ``[REDACTED:example-key#1]``.
- ``register_parsers``: the ``ini`` parser makes ``*.ini`` files part of the index: each
  ``[section]`` is a section that search finds and ``read_doc`` reads by its name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cuedeck import Workspace
    from cuedeck.index.parsers import ParseContext
    from cuedeck.masking.spans import SecretSpan
    from cuedeck.models import Document


class WordCount(TypedDict):
    """The reply of ``word_count``."""

    path: str
    words: int
    headings: int


def word_count(workspace: Workspace, path: str) -> WordCount:
    """Count the words and headings of one markdown file in the workspace.

    ``path`` is workspace-relative, such as ``docs/guide.md``.
    """
    from cuedeck_example_plugin.errors import TooFewWords
    from cuedeck_example_plugin.settings import ExampleSettings

    document = workspace.document(workspace.relative_path(path))
    words = len(workspace.read_text(document.path).split())
    least = workspace.config.section("example", ExampleSettings).min_words
    if words < least:
        raise TooFewWords(
            f"{document.path} has {words} words, fewer than [example] min_words = {least}",
            path=document.path,
            words=words,
            min_words=least,
        )
    return {"path": document.path, "words": words, "headings": len(document.headings)}


class ExampleKeyMasker:
    """Finds the example service's keys: ``exk_`` and 32 letters or digits."""

    # The literal comes first: Python's regex engine then jumps from one ``exk_`` to the
    # next instead of trying every position (a ``\b`` in front would make it try each,
    # twenty times slower on long texts). The word boundary before it is checked here.
    pattern = re.compile(r"exk_[A-Za-z0-9]{32}\b")

    def find_secrets(self, text: str) -> Iterator[SecretSpan]:
        from cuedeck.masking.spans import SecretSpan

        for match in self.pattern.finditer(text):
            start = match.start()
            before = text[start - 1] if start else ""
            if not (before.isalnum() or before == "_"):
                yield SecretSpan(start, match.end(), "example-key")


@hookimpl
def register_settings(register: Any) -> None:
    from cuedeck_example_plugin.settings import ExampleSettings

    register("example", ExampleSettings)


def parse_ini(path: str, data: bytes, context: ParseContext) -> Document:
    """An INI file as a document: each ``[section]`` a heading spanning its keys."""
    import hashlib  # here, not at the top: `cue` imports every plugin module at start

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
    from cuedeck.settings import RateLimit

    # 60 calls a minute per MCP client, 20 at once; [rate_limits.word_count] overrides it.
    limit = RateLimit(per_minute=60, burst=20)
    register(word_count, category="example", read_only=True, idempotent=True, rate_limit=limit)


@hookimpl(tryfirst=True)
def register_maskers(register: Any) -> None:
    register("example-key", ExampleKeyMasker())


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
