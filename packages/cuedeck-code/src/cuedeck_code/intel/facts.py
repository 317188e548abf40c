"""What the syntactic graph keeps of one source file, before anything is resolved.

A file's facts are plain lists (kept as JSON in the graph's SQLite file):

- ``ns``: the namespace its top-level names live in: its own path for languages whose
  files are modules (Python, JavaScript, TypeScript, Rust), or one shared by several
  files (a Go package's folder, a Java package, C and C++'s global names, Ruby's
  constants);
- ``defs``: ``[name, kind, line, end_line, extra]``, the qualified name as the index
  names the symbol (``Client.send``), ``extra`` holding ``bases`` (chains) of a class,
  ``returns`` (a chain) of a function and ``property`` for a getter;
- ``binds``: ``[scope, local, target_ns, target_name, line, column]``, an import: the
  name ``local`` in ``scope`` (``""``: the module) stands for ``target_name`` of
  namespace ``target_ns`` (None: the namespace itself; ``local`` ``*``: every name);
  ``column`` -1 when the name is written where it is defined (``export default class
  A``), which makes no edge;
- ``vars``: ``[scope, name, how, chain]``, a name bound in a scope: ``new`` (the result of
  calling ``chain``), ``alias`` (what ``chain`` is), ``annot`` (an instance of the type
  ``chain``), ``self``/``cls`` (the enclosing class's instance, or the class), ``local``
  (something unknown that hides outer names);
- ``refs``: ``[scope, owner, role, chain]``: an expression naming things, resolved in
  ``scope``, written inside the definition ``owner``; ``role`` is ``reference``,
  ``type``, ``inherit``, ``decorator``...

A chain is a list of parts ``[name, line, column]``: ``a.b(x).c`` is ``a``, ``b``, ``()``,
``c``; ``()`` calls what precedes it, ``[]`` takes an item of it, ``?`` is something
the graph cannot follow (a literal). Lines are 1-based, columns 0-based, in UTF-16 code
units as SCIP counts them (bytes on an ASCII line).
"""

from __future__ import annotations

import posixpath
from typing import Any

#: One part of a chain: ``[name, line, column]``.
Part = list[Any]
Chain = list[Part]
Facts = dict[str, Any]
#: A row of the names table: ``(kind, path, line, end_line, target_ns, target_name,
#: extra)``, ``extra`` decoded (a definition's bases and returns, a name's value).
Row = tuple[str, str, int, int, str | None, str | None, dict[str, Any]]
#: An edge: ``(src_path, src_name, dst_path, dst_name, line, column, relation)``.
Edge = tuple[str, str, str, str, int, int, str]

#: The names of a method's receiver (its instance, or its class), by language;
#: ``THIS`` in the others.
RECEIVERS = {"python": frozenset({"self", "cls"})}
THIS = frozenset({"this"})

#: Namespaces shared by several files, by language.
SHARED = {"go": "go:", "java": "java:", "c": "c:", "cpp": "c:", "ruby": "rb:"}
#: Kinds of definitions that hold members.
CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "type"})
#: Kinds the graph links to (what callers, references and impact are about).
LINKED = frozenset(
    {"class", "function", "method", "interface", "struct", "enum", "trait", "type", "macro"}
)


def empty(ns: str) -> Facts:
    """The facts of a file with nothing in it yet."""
    return {"ns": ns, "defs": [], "binds": [], "vars": [], "refs": []}


def file_namespace(path: str, language: str) -> str:
    """The namespace of a file's names, before a Java ``package`` line says better."""
    prefix = SHARED.get(language)
    if prefix is None:
        return path
    if language == "go":
        return prefix + posixpath.dirname(path)
    if language == "java":
        return prefix + posixpath.dirname(path)
    return prefix


def python_module(path: str, paths: frozenset[str]) -> str:
    """The dotted module name of a Python file: from the topmost folder of the chain of
    packages (``__init__.py``) that holds it (``django/db/models/query.py`` is
    ``django.db.models.query``)."""
    folder, name = posixpath.split(path)
    stem = posixpath.splitext(name)[0]
    parts = [] if stem == "__init__" else [stem]
    while folder and f"{folder}/__init__.py" in paths:
        folder, package = posixpath.split(folder)
        parts.insert(0, package)
    return ".".join(parts) or stem
