"""What the code package's derived data depends on besides the files, as digests: a new
release (or a local edit) of the parser, its queries or a grammar makes every workspace
parse its code again, and a new graph walker makes the code graph be built again.

Each digest is of the source files that make the data and of the grammars' compiled
files (their names and sizes: a new wheel of a grammar parses differently). It is
computed once per process, from files only (about a millisecond).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

HERE = Path(__file__).parent
#: The modules whose code decides what a code file parses into.
PARSE_MODULES = ("parser.py", "symbols.py", "languages.py", "file_kinds.py", "imports.py")


@functools.cache
def parser_revision() -> str:
    """The revision of the code parser: its modules, its queries and the grammars."""
    files = [HERE / name for name in PARSE_MODULES]
    files += sorted((HERE / "queries").glob("*.scm"))
    return _digest(files, grammars=True)


@functools.cache
def graph_revision() -> str:
    """The revision of the code graph's walkers and resolver (the ``intel`` modules) and
    of the grammars they walk."""
    return _digest(sorted((HERE / "intel").glob("*.py")), grammars=True)


def _digest(files: list[Path], *, grammars: bool) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
    if grammars:
        for line in _grammar_files():
            digest.update(line.encode())
    return digest.hexdigest()[:16]


def _grammar_files() -> list[str]:
    """``module/file size`` of each grammar's compiled files (and tree-sitter's own)."""
    from cuedeck_code.languages import LANGUAGES

    found: list[str] = []
    for module in sorted({"tree_sitter", *(language.module for language in LANGUAGES.values())}):
        spec = importlib.util.find_spec(module)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        for folder in folders:
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith((".so", ".pyd", ".dylib")) and entry.is_file():
                    found.append(f"{module}/{entry.name} {entry.stat().st_size}\n")
    return found
