"""``cue open``: a fuzzy finder over cards, docs and their headings, opening ``$EDITOR``.

Every indexed file is an entry (title and path), and so is every heading (heading
text, file title and path, with its line) and every code symbol (its qualified name,
``Client.send``, kind and path, with its line). A query is split into words; each word must
match an entry as a substring or, failing that, as a subsequence, and tighter matches
at word starts score higher. The interactive picker (prompt_toolkit) filters as you
type; without a terminal, :func:`numbered_choice` prints a numbered list instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from cuedeck.errors import CueError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyPressEvent

    from cuedeck.models import Document

_KIND_ORDER = {"card": 0, "doc": 1, "file": 2}
#: Editors that take ``+LINE path``.
PLUS_LINE = frozenset(
    {
        *("vi", "vim", "nvim", "gvim", "mvim", "view", "nano", "pico", "emacs", "emacsclient"),
        *("micro", "kak", "joe", "jed", "ne", "gedit", "xed", "pluma", "mousepad"),
    }
)
#: Editors that take ``-g path:line``.
GOTO_FLAG = frozenset({"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"})
#: Editors that take ``path:line``.
PATH_COLON = frozenset({"subl", "sublime_text", "zed", "hx", "helix"})
#: Editors that take ``-l LINE path``.
LINE_FLAG = frozenset({"kate", "mate"})


@attrs.frozen
class Entry:
    """A file, or a heading in it, that the finder can open."""

    path: str
    title: str
    kind: str
    heading: str | None = None
    line: int | None = None
    haystack: str = attrs.field(default="", eq=False, repr=False)

    @property
    def label(self) -> str:
        """One line for the list: ``kind  title › heading  path:line``."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        name = f"{self.title} › {self.heading}" if self.heading else self.title
        return f"{self.kind:<4}  {' '.join(name.split())}  {where}"


def entries_of(documents: Mapping[str, Document]) -> list[Entry]:
    """One entry per document and one per heading or code symbol, cards first."""
    found: list[Entry] = []
    for path, document in documents.items():
        title = " ".join(document.title.split())
        found.append(Entry(path, title, document.kind, haystack=f"{title} {path}".lower()))
        for heading in document.headings:
            if heading.level == 1 and heading.text == document.title:
                continue  # the file entry already stands for its title heading
            found.append(
                Entry(
                    path,
                    title,
                    document.kind,
                    heading=heading.text,
                    line=heading.line,
                    haystack=f"{heading.text} {title} {path}".lower(),
                )
            )
        for symbol in document.symbols:
            if symbol.kind == "module":
                continue  # the file entry stands for it
            found.append(
                Entry(
                    path,
                    title,
                    document.kind,
                    heading=symbol.name,
                    line=symbol.line,
                    haystack=f"{symbol.name} {symbol.kind} {path}".lower(),
                )
            )
    found.sort(key=lambda e: (_KIND_ORDER.get(e.kind, 3), e.path, e.line or 0))
    return found


def _boundary(text: str, index: int) -> bool:
    return index == 0 or not text[index - 1].isalnum()


def score_word(word: str, text: str) -> int | None:
    """How well ``word`` matches ``text`` (both lower case), or None when it does not."""
    at = text.find(word)
    if at >= 0:
        return 100 + 2 * len(word) + (25 if _boundary(text, at) else 0) - min(at, 40) // 2
    best: int | None = None
    start = text.find(word[0])
    for _ in range(8):  # a few start positions are enough to find a tight match
        if start < 0:
            break
        end = start
        for char in word[1:]:
            end = text.find(char, end + 1)
            if end < 0:
                return best  # no later start can match either
        gaps = end - start + 1 - len(word)
        score = 60 - 3 * min(gaps, 15) + (15 if _boundary(text, start) else 0) - min(start, 40) // 4
        best = score if best is None else max(best, score)
        start = text.find(word[0], start + 1)
    return best


def rank(entries: Sequence[Entry], query: str, *, limit: int | None = None) -> list[Entry]:
    """Entries matching every word of ``query``, best first (files only for no query)."""
    words = query.lower().split()
    if not words:
        files = [entry for entry in entries if entry.heading is None]
        return files[:limit] if limit else files
    scored: list[tuple[int, int, Entry]] = []
    for position, entry in enumerate(entries):
        total = 0
        for word in words:
            score = score_word(word, entry.haystack)
            if score is None:
                break
            total += score
        else:
            if entry.heading is None:
                total += 5  # a whole file beats one of its sections on a tie
            scored.append((-total, position, entry))
    scored.sort(key=lambda item: (item[0], item[1]))
    found = [entry for _score, _position, entry in scored]
    return found[:limit] if limit else found


# --- the interactive picker --------------------------------------------------------------


def pick(
    entries: Sequence[Entry],
    query: str = "",
    *,
    input: Any = None,
    output: Any = None,
    height: int = 12,
) -> Entry | None:
    """Let the user choose an entry: type to filter, arrows to move, Enter, Esc to quit."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document as PromptDocument
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.layout.processors import BeforeInput
    from prompt_toolkit.styles import Style

    state: dict[str, Any] = {"matches": rank(entries, query), "selected": 0, "top": 0}

    def refilter(buffer: Buffer) -> None:
        state["matches"] = rank(entries, buffer.text)
        state["selected"] = state["top"] = 0

    def move(step: int) -> None:
        count = len(state["matches"])
        if count:
            state["selected"] = max(0, min(count - 1, state["selected"] + step))
            if state["selected"] < state["top"]:
                state["top"] = state["selected"]
            elif state["selected"] >= state["top"] + height:
                state["top"] = state["selected"] - height + 1

    def rows() -> StyleAndTextTuples:
        matches: list[Entry] = state["matches"]
        shown = matches[state["top"] : state["top"] + height]
        fragments: StyleAndTextTuples = []
        for offset, entry in enumerate(shown):
            chosen = state["top"] + offset == state["selected"]
            fragments.append(("class:selected" if chosen else "", ("> " if chosen else "  ")))
            fragments.append(("class:selected" if chosen else "", entry.label + "\n"))
        fragments.append(("class:count", f"  {len(matches)}/{len(entries)}"))
        return fragments

    keys = KeyBindings()

    @keys.add("up")
    @keys.add("c-p")
    def _up(event: KeyPressEvent) -> None:
        move(-1)

    @keys.add("down")
    @keys.add("c-n")
    def _down(event: KeyPressEvent) -> None:
        move(1)

    @keys.add("pageup")
    def _page_up(event: KeyPressEvent) -> None:
        move(-height)

    @keys.add("pagedown")
    def _page_down(event: KeyPressEvent) -> None:
        move(height)

    @keys.add("enter")
    def _open(event: KeyPressEvent) -> None:
        matches = state["matches"]
        event.app.exit(result=matches[state["selected"]] if matches else None)

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-g")
    def _quit(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    buffer = Buffer(
        document=PromptDocument(query, len(query)), multiline=False, on_text_changed=refilter
    )
    layout = Layout(
        HSplit(
            [
                Window(BufferControl(buffer, input_processors=[BeforeInput("open> ")]), height=1),
                Window(FormattedTextControl(rows), height=height + 1),
            ]
        )
    )
    app: Application[Entry | None] = Application(
        layout=layout,
        key_bindings=keys,
        style=Style.from_dict({"selected": "reverse", "count": "#888888"}),
        full_screen=False,
        erase_when_done=True,
        input=input,
        output=output,
    )
    app.ttimeoutlen = 0.05  # Esc alone should quit at once, not wait for a sequence
    # An error of something else on the event loop (a transport collected meanwhile) is
    # logged by asyncio, not shown by the picker with "Press ENTER to continue", which
    # would wait for a key the person did not mean for it (or forever, without a terminal).
    return app.run(set_exception_handler=False)


def numbered_choice(
    entries: Sequence[Entry], query: str, *, stdin: TextIO, out: TextIO, limit: int = 20
) -> Entry | None:
    """Without a terminal: print the best matches numbered and read a number from stdin."""
    matches = rank(entries, query, limit=limit)
    for number, entry in enumerate(matches, start=1):
        out.write(f"{number:>3}  {entry.label}\n")
    out.write(f"Open which? [1-{len(matches)}, empty to quit]: ")
    out.flush()
    answer = stdin.readline().strip()
    out.write("\n")
    if not answer:
        return None
    if not answer.isdigit() or not 1 <= int(answer) <= len(matches):
        from cuedeck.errors import InvalidInput

        raise InvalidInput(f"{answer!r} is not a number from 1 to {len(matches)}", field="choice")
    return matches[int(answer) - 1]


# --- the editor --------------------------------------------------------------------------


def editor_command(path: Path, line: int | None, editor: str | None = None) -> list[str]:
    """The argv that opens ``path`` at ``line`` in ``editor`` ($VISUAL, else $EDITOR)."""
    chosen = editor or os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not chosen or not chosen.strip():
        raise CueError(
            "no editor to open the file with",
            path=str(path),
            help="set $EDITOR (for example `export EDITOR=vim`), or use `cue open --print`",
        )
    argv = shlex.split(chosen)
    name = Path(argv[0]).name.lower().removesuffix(".exe")
    if not line or line <= 1:
        return [*argv, str(path)]
    if name in PLUS_LINE:
        return [*argv, f"+{line}", str(path)]
    if name in GOTO_FLAG:
        return [*argv, "-g", f"{path}:{line}"]
    if name in PATH_COLON:
        return [*argv, f"{path}:{line}"]
    if name in LINE_FLAG:
        return [*argv, "-l", str(line), str(path)]
    return [*argv, str(path)]


def open_in_editor(path: Path, line: int | None, editor: str | None = None) -> None:
    """Run the editor on ``path`` and wait for it; CueError when it cannot start or fails."""
    argv = editor_command(path, line, editor)
    try:
        status = subprocess.run(argv, check=False).returncode
    except OSError as exc:
        raise CueError(
            f"could not start the editor {argv[0]!r}: {exc.strerror or exc}",
            help="check $VISUAL / $EDITOR",
        ) from None
    if status != 0:
        raise CueError(f"the editor {argv[0]!r} exited with status {status}", path=str(path))
