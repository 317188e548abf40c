"""The syntactic extractor: a source file's facts from its tree-sitter parse.

Registered as ``syntactic`` with ``register_code_indexers``: it reads every language
cuedeck-code parses. Python and the script languages have walkers of their own that
follow scopes closely; the others share one driven by each language's node types.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from cuedeck_code.intel.facts import file_namespace
from cuedeck_code.intel.reparse import RecentTrees
from cuedeck_code.intel.walk_base import collector_paused
from cuedeck_code.languages import LANGUAGES, grammar, language_of

if TYPE_CHECKING:
    from collections.abc import Collection

    from cuedeck_code.intel.facts import Facts


class SyntacticExtractor:
    """Facts of the languages cuedeck-code parses, from their syntax alone."""

    label = "syntactic"
    languages: frozenset[str] = frozenset(LANGUAGES)

    def __init__(self) -> None:
        self.trees = RecentTrees()

    def facts(self, path: str, data: bytes, paths: Collection[str]) -> Facts | None:
        """The facts of the file at ``path`` (None: a language it does not read). A
        file with a syntax error gives what its tree holds around the error."""
        language = language_of(path)
        if language is None:
            return None
        with collector_paused():
            return self._facts(language.name, path, data, paths)

    def _facts(self, name: str, path: str, data: bytes, paths: Collection[str]) -> Facts:
        import tree_sitter

        from cuedeck_code.imports import path_index

        found_grammar = grammar(name)
        tree = self.trees.parse(found_grammar.parser, (name, path), data)
        index = path_index(paths if isinstance(paths, frozenset) else frozenset(paths))
        if name == "python":
            from cuedeck_code.intel.walk_python import python_facts

            return python_facts(tree.root_node, data, path, index)
        if name in ("javascript", "typescript", "tsx"):
            from cuedeck_code.intel.walk_script import script_facts

            return script_facts(tree.root_node, data, path, index)
        from cuedeck_code.intel.walk_other import other_facts
        from cuedeck_code.symbols import definitions

        matches = tree_sitter.QueryCursor(found_grammar.query).matches(tree.root_node)
        found = definitions(found_grammar, matches, data)
        facts = other_facts(name, tree.root_node, data, path, found, index)
        if facts["ns"] == file_namespace(path, name) and name == "java":
            facts["ns"] = "java:" + path.rpartition("/")[0].replace("/", ".")
        return facts


def interface(facts: Facts) -> str:
    """A digest of what other files may see of a file: its definitions' names and kinds,
    its module-level bindings and its classes' bases. When it changes, the files that
    use it are resolved again."""
    classes = {d[0] for d in facts["defs"] if d[1] in ("class", "struct", "interface")}
    seen = {
        "defs": sorted((d[0], d[1], json.dumps(d[4], sort_keys=True)) for d in facts["defs"]),
        "binds": sorted(tuple(map(str, b[:4])) for b in facts["binds"] if b[0] == ""),
        "vars": sorted(
            (v[0], v[1], v[2], json.dumps(v[3]))
            for v in facts["vars"]
            if v[2] != "local" and (not v[0] or v[0] in classes)
        ),
        "ns": facts["ns"],
    }
    return hashlib.sha256(json.dumps(seen, default=str).encode()).hexdigest()[:16]
