"""The CueDeck plugin of cuedeck-code (entry point ``cuedeck = code``): the ``[code]``
config section, the ``code`` parser and the code search and navigation tools.

Kept import-light: the parser's module imports tree-sitter only when it parses, and the
tools are registered by import path, so their modules load when a tool is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed, RegisterParser, RegisterTool


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_code.settings import CodeSettings

    register("code", CodeSettings)


@hookimpl
def register_parsers(register: RegisterParser) -> None:
    from cuedeck_code.languages import patterns
    from cuedeck_code.parser import parse_code
    from cuedeck_code.selection import select

    register("code", parse_code, patterns=patterns(), select=select)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    # search_code is a search tool (and in the MCP core profile); the others navigate files.
    register(
        "cuedeck_code.search_tool:search_code", category="search", read_only=True, idempotent=True
    )
    files = "cuedeck_code.files_tools"
    register(f"{files}:list_files", category="files", read_only=True, idempotent=True)
    register(f"{files}:browse_directory", category="files", read_only=True, idempotent=True)
    register(f"{files}:directory_tree", category="files", read_only=True, idempotent=True)
    register(
        "cuedeck_code.regex_tool:regex_search", category="files", read_only=True, idempotent=True
    )
