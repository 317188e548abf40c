"""The CueDeck plugin of cuedeck-code (entry point ``cuedeck = code``): the ``[code]``
config section, the ``code`` parser, the code search and navigation tools, and
importance (the ``importance`` code ranker over the ``code_graph`` service) with the
repository map, and the code graph's detached builder in ``cue status``.

Kept import-light: the parser's module imports tree-sitter only when it parses, and the
tools are registered by import path, so their modules load when a tool is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from cuedeck.config import Config
    from cuedeck.hookspecs import (
        RegisterCommand,
        RegisterNamed,
        RegisterParser,
        RegisterSceneSource,
        RegisterTool,
    )
    from cuedeck.index.parsers import ParseContext
    from cuedeck.models import BackgroundProcess, Document, Problem, SceneExtra
    from cuedeck.workspace import Workspace


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_code.settings import CodeSettings

    register("code", CodeSettings)


def _parse(path: str, data: bytes, context: ParseContext) -> Document:
    from cuedeck_code.parser import parse_code

    return parse_code(path, data, context)


def _select(root: Path, config: Config) -> Callable[[str, int], str | None]:
    from cuedeck_code.selection import select

    return select(root, config)


@hookimpl
def register_parsers(register: RegisterParser) -> None:
    from cuedeck_code.languages import patterns

    # The parser and the selector load when a refresh has files to judge or parse: a
    # command that finds the index in step (`cue search`) imports neither.
    from cuedeck_code.revision import parser_revision

    register("code", _parse, patterns=patterns(), select=_select, revision=parser_revision())


@hookimpl
def register_tools(register: RegisterTool) -> None:
    # search_code and find_symbol are search tools (in the MCP core profile); the others
    # navigate files.
    register(
        "cuedeck_code.search_tool:search_code", category="search", read_only=True, idempotent=True
    )
    register(
        "cuedeck_code.symbol_tool:find_symbol", category="search", read_only=True, idempotent=True
    )
    files = "cuedeck_code.navigation_tools"
    register(f"{files}:list_files", category="files", read_only=True, idempotent=True)
    register(f"{files}:browse_directory", category="files", read_only=True, idempotent=True)
    register(f"{files}:directory_tree", category="files", read_only=True, idempotent=True)
    register(
        "cuedeck_code.regex_tool:regex_search", category="files", read_only=True, idempotent=True
    )
    # Code intelligence, under the specification's names: the scip category.
    intel = "cuedeck_code.intel.tools"
    for name in ("scip_definition", "scip_references", "scip_dependencies", "scip_dependents",
                 "scip_impact", "scip_callchain"):  # fmt: skip
        register(
            f"{intel}:{name}", category="scip", read_only=True, idempotent=True, reads_as="text"
        )
    overview = "cuedeck_code.intel.overview"
    for name in ("scip_context", "scip_call_graph", "scip_status"):
        register(
            f"{overview}:{name}", category="scip", read_only=True, idempotent=True, reads_as="text"
        )
    # Its reply's lists say which indexers ran and how: the text covers them too.
    register(f"{overview}:scip_generate", category="scip", reads_as="text")
    # The map is what an agent reads first: a scene tool, in the core profile.
    register("cuedeck_code.repomap:repo_map", category="scene", read_only=True, idempotent=True)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_code.commands:map_command",
        name="map",
        help="Print the repository's most important definitions within a token budget.",
    )
    register(
        "cuedeck_code.commands:find_command",
        name="find",
        help="Find definitions by name or qualified name: Text.wrap, wrap, http.Client.Do.",
    )
    register(
        "cuedeck_code.intel.commands:graph_group",
        name="graph",
        help="Code intelligence: definitions, references, callers, callees, impact, call chains.",
    )


def _code_graph(workspace: Workspace) -> object:
    # numpy loads with the graph, not when another service (cards) is looked up.
    from cuedeck_code.codegraph import GraphService

    return GraphService(workspace)


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("code_graph", _code_graph)
    register("code_intel", _code_intel)


def _code_intel(workspace: Workspace) -> object:
    from cuedeck_code.intel.service import CodeIntel

    return CodeIntel(workspace)


def _scene_graph(workspace: Workspace, card_id: str) -> Iterable[SceneExtra]:
    from cuedeck_code.intel.scene import graph_neighbours

    return graph_neighbours(workspace, card_id)


@hookimpl
def register_scene_sources(register: RegisterSceneSource) -> None:
    register("code-graph", _scene_graph, setting="code.scene_graph")


@hookimpl
def register_code_indexers(register: RegisterNamed) -> None:
    from cuedeck_code.intel.extract import SyntacticExtractor
    from cuedeck_code.intel.scip_run import OFFICIAL

    register("syntactic", SyntacticExtractor())
    for indexer in OFFICIAL:
        register(indexer.name, indexer)


@hookimpl
def register_code_rankers(register: RegisterNamed) -> None:
    from cuedeck_code.importance import ImportanceRanker

    register("importance", ImportanceRanker())


def _graph_builder(workspace: Workspace) -> list[BackgroundProcess]:
    from cuedeck_code.intel.detached import listed

    return listed(workspace)


@hookimpl
def register_processes(register: RegisterNamed) -> None:
    register("graph-builder", _graph_builder)


def _graph_builder_check(workspace: Workspace) -> list[Problem]:
    from cuedeck_code.intel.detached import doctor_check

    return doctor_check(workspace)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    register("graph-builder", _graph_builder_check)


@hookimpl
def register_index_reports(register: RegisterNamed) -> None:
    from cuedeck_code.intel.report import graph_report

    register("code_graph", graph_report)
