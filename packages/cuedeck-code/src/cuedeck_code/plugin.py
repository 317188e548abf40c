"""The CueDeck plugin of cuedeck-code (entry point ``cuedeck = code``): the ``code``
parser and the code search and navigation tools.

Kept import-light: the parser's module imports tree-sitter only when it parses, and the
tools are registered by import path, so their modules load when a tool is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterParser


@hookimpl
def register_parsers(register: RegisterParser) -> None:
    from cuedeck_code.languages import patterns
    from cuedeck_code.parser import parse_code
    from cuedeck_code.selection import select

    register("code", parse_code, patterns=patterns(), select=select)
