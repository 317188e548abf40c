"""The languages cuedeck-code reads: file suffixes, grammar wheels and queries.

Each grammar comes from its official PyPI wheel (``tree-sitter-python``...), so nothing
is downloaded at run time. Parsers and compiled queries are made on first use in each
process (the index forks workers on a cold start, and tree-sitter objects are not
shared across a fork), then kept.
"""

from __future__ import annotations

import functools
import os
import posixpath
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable


@attrs.frozen
class Language:
    """One language: its grammar, its query file and the files that are written in it.

    ``wrappers`` are node types around a definition that belong to it (decorators, an
    ``export``, a ``template<...>``), so its lines start there; ``comment`` names the
    comment node types whose run right above a definition is its documentation.
    """

    name: str
    module: str
    function: str
    query: str
    suffixes: tuple[str, ...]
    wrappers: frozenset[str] = frozenset()
    comment: frozenset[str] = frozenset({"comment"})


LANGUAGES: dict[str, Language] = {
    language.name: language
    for language in (
        Language(
            "python",
            "tree_sitter_python",
            "language",
            "python",
            (".py", ".pyi", ".pyw"),
            wrappers=frozenset({"decorated_definition"}),
        ),
        Language(
            "javascript",
            "tree_sitter_javascript",
            "language",
            "javascript",
            (".js", ".jsx", ".mjs", ".cjs"),
            wrappers=frozenset(
                {
                    "export_statement",
                    "lexical_declaration",
                    "variable_declaration",
                    "expression_statement",
                }
            ),
        ),
        Language(
            "typescript",
            "tree_sitter_typescript",
            "language_typescript",
            "typescript",
            (".ts", ".mts", ".cts"),
            wrappers=frozenset(
                {
                    "export_statement",
                    "lexical_declaration",
                    "variable_declaration",
                    "ambient_declaration",
                    "expression_statement",
                }
            ),
        ),
        Language(
            "tsx",
            "tree_sitter_typescript",
            "language_tsx",
            "typescript",
            (".tsx",),
            wrappers=frozenset(
                {
                    "export_statement",
                    "lexical_declaration",
                    "variable_declaration",
                    "ambient_declaration",
                    "expression_statement",
                }
            ),
        ),
        Language(
            "go",
            "tree_sitter_go",
            "language",
            "go",
            (".go",),
            wrappers=frozenset({"type_declaration"}),
        ),
        Language(
            "rust",
            "tree_sitter_rust",
            "language",
            "rust",
            (".rs",),
            comment=frozenset({"line_comment", "block_comment"}),
        ),
        Language(
            "java",
            "tree_sitter_java",
            "language",
            "java",
            (".java",),
            comment=frozenset({"line_comment", "block_comment"}),
        ),
        Language("c", "tree_sitter_c", "language", "c", (".c",)),
        Language(
            "cpp",
            "tree_sitter_cpp",
            "language",
            "cpp",
            (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".h", ".ipp", ".tpp"),
            wrappers=frozenset({"template_declaration"}),
        ),
        Language("ruby", "tree_sitter_ruby", "language", "ruby", (".rb", ".rake", ".gemspec")),
    )
}

#: Suffix (lower case) -> language name. ``.h`` is read as C++: a C header parses as C++
#: nearly always, a C++ header never as C.
BY_SUFFIX: dict[str, str] = {
    suffix: language.name for language in LANGUAGES.values() for suffix in language.suffixes
}
#: File names without a telling suffix.
BY_NAME: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}


def language_of(path: str) -> Language | None:
    """The language of the file at ``path``, by its suffix or name, or None."""
    name = posixpath.basename(path)
    found = BY_NAME.get(name) or BY_SUFFIX.get(posixpath.splitext(name)[1].lower())
    return LANGUAGES[found] if found else None


def patterns(languages: Iterable[str] = ()) -> list[str]:
    """Globs of the files of ``languages`` (all when empty), for ``register_parsers``."""
    wanted = set(languages) or set(LANGUAGES)
    found = [f"*{s}" for name in sorted(wanted) for s in LANGUAGES[name].suffixes]
    found += [name for name, language in BY_NAME.items() if language in wanted]
    return sorted(set(found))


@attrs.frozen
class Grammar:
    """A language's tree-sitter parser and compiled query, for one process."""

    language: Language
    parser: Any
    query: Any


def grammar(name: str) -> Grammar:
    """The grammar of language ``name``, made on first use in this process."""
    return _grammar(name, os.getpid())


@functools.cache
def _grammar(name: str, pid: int) -> Grammar:
    """Keyed by process id: a forked worker makes its own rather than use its parent's."""
    import importlib  # importlib.resources here: every workspace imports this module
    import importlib.resources

    import tree_sitter

    language = LANGUAGES[name]
    module = importlib.import_module(language.module)
    ts_language = tree_sitter.Language(getattr(module, language.function)())
    source = importlib.resources.files("cuedeck_code").joinpath(f"queries/{language.query}.scm")
    query = tree_sitter.Query(ts_language, source.read_text(encoding="utf-8"))
    return Grammar(language, tree_sitter.Parser(ts_language), query)
