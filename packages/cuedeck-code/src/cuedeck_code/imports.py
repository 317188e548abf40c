"""A module's imports, resolved to the workspace files they name (best effort).

Python's relative and absolute module imports, JavaScript and TypeScript relative imports
(``./x`` as ``x.ts``, ``x/index.js``...), Go package paths (the folder whose path ends
the import path), Rust ``mod``, ``use crate::``/``self::``/``super::``, Java imports,
C/C++ ``#include "..."`` and Ruby ``require``/``require_relative``. An absolute name is
looked up by path suffix (``cuedeck.models`` finds ``packages/x/src/cuedeck/models.py``),
the candidate nearest the importing file first. What resolves to no workspace file (the
standard library, a third-party package) is not a reference.
"""

from __future__ import annotations

import functools
import posixpath
from typing import TYPE_CHECKING, Any

from cuedeck.models import Reference

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from cuedeck_code.languages import Grammar

#: Most files one import may name (a Go package or a Java wildcard names a folder).
FOLDER_LIMIT = 20
_JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


class PathIndex:
    """The workspace's paths, by every suffix of whole parts and by folder."""

    def __init__(self, paths: Collection[str]) -> None:
        self.paths = paths
        self.by_suffix: dict[str, list[str]] = {}
        self.by_folder: dict[str, list[str]] = {}
        for path in sorted(paths):
            parts = path.split("/")
            for k in range(len(parts)):
                self.by_suffix.setdefault("/".join(parts[k:]), []).append(path)
            self.by_folder.setdefault(posixpath.dirname(path), []).append(path)

    def exists(self, path: str) -> bool:
        return path in self.paths

    def nearest(self, suffix: str, importer: str, *, anchored: bool = False) -> str | None:
        """The path ending in ``suffix`` nearest ``importer``; ``anchored``: only one
        whose folder above the suffix holds the importer (for one-part names like
        ``utils``, which would otherwise match any ``utils.py``)."""
        found = self.by_suffix.get(suffix)
        if not found:
            return None
        if anchored:
            found = [p for p in found if importer.startswith(p[: len(p) - len(suffix)])]
            if not found:
                return None
        return max(found, key=lambda p: (_shared(p, importer), -len(p), p))

    def folder(self, suffix: str, suffixes: tuple[str, ...], least: int = 1) -> list[str]:
        """Files with one of ``suffixes`` in the folder whose path ends in ``suffix``
        (matched on at least ``least`` trailing parts)."""
        parts = suffix.strip("/").split("/")
        for k in range(len(parts) - least + 1):
            folder = "/".join(parts[k:])
            files = [
                p
                for p in self.by_folder.get(folder, [])
                if p.endswith(suffixes) and not p.endswith(("_test.go", "Test.java"))
            ]
            if files:
                return files[:FOLDER_LIMIT]
        return []


def _shared(a: str, b: str) -> int:
    """How many leading path parts ``a`` and ``b`` share."""
    count = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        count += 1
    return count


@functools.lru_cache(maxsize=4)
def path_index(paths: Collection[str]) -> PathIndex:
    """The :class:`PathIndex` of one refresh's paths (built once per process)."""
    return PathIndex(paths)


def imports(
    grammar: Grammar, nodes: list[Any], data: bytes, path: str, paths: Collection[str]
) -> list[Reference]:
    """The import references of the file at ``path`` (``nodes``: the query's ``@import``
    captures), each target a workspace path."""
    if not nodes:
        return []
    index = path_index(paths if isinstance(paths, frozenset) else frozenset(paths))
    name = grammar.language.name
    resolve = _RESOLVERS.get(name)
    if resolve is None:
        return []
    references: list[Reference] = []
    seen: set[str] = set()
    for node in nodes:
        raw = data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
        statement = node if node.type.endswith(("statement", "declaration")) else node.parent
        line = node.start_point[0] + 1
        shown = _raw_line(data, statement or node)
        for target in resolve(node, raw, path, index):
            if target != path and target not in seen:
                seen.add(target)
                references.append(Reference("import", shown, target, None, line))
    references.sort(key=lambda r: (r.line, r.target))
    return references


def _raw_line(data: bytes, node: Any) -> str:
    text = data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"


def _unquote(raw: str) -> str:
    return raw.strip().strip("\"'`<>")


# --- Python ------------------------------------------------------------------------------


def _python(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    if node.type == "future_import_statement":
        return
    modules: list[tuple[int, list[str], list[str]]] = []  # (dots, module parts, names)
    if node.type == "import_statement":
        for child in node.named_children:
            dotted = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if dotted is not None:
                modules.append((0, _dotted(dotted), []))
    else:
        module = node.child_by_field_name("module_name")
        if module is None:
            return
        dots, parts = 0, []
        if module.type == "relative_import":
            for child in module.children:
                if child.type == "import_prefix":
                    dots = len(child.text.decode())
                elif child.type == "dotted_name":
                    parts = _dotted(child)
        else:
            parts = _dotted(module)
        names = []
        for child in node.children_by_field_name("name"):
            dotted = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if dotted is not None:
                names.append(".".join(_dotted(dotted)))
        modules.append((dots, parts, names))
    for dots, parts, names in modules:
        yield from _python_module(dots, parts, names, path, index)


def _dotted(node: Any) -> list[str]:
    return [part for part in node.text.decode("utf-8", errors="replace").split(".") if part]


def _python_module(
    dots: int, parts: list[str], names: list[str], path: str, index: PathIndex
) -> Iterator[str]:
    if dots:
        base = posixpath.dirname(path)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        stem = posixpath.join(base, *parts) if parts else base
        found = False
        for name in names:  # ``from . import models``: a module each
            for candidate in (f"{stem}/{name}.py", f"{stem}/{name}/__init__.py"):
                if index.exists(candidate):
                    found = True
                    yield candidate
                    break
        if parts or not found:
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                if index.exists(candidate):
                    yield candidate
                    break
        return
    if not parts:
        return
    stem = "/".join(parts)
    anchored = len(parts) == 1
    for name in names:  # ``from package import module``
        for suffix in (f"{stem}/{name}.py", f"{stem}/{name}/__init__.py"):
            hit = index.nearest(suffix, path)
            if hit:
                yield hit
                break
    for suffix in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
        hit = index.nearest(suffix, path, anchored=anchored)
        if hit:
            yield hit
            return


# --- JavaScript and TypeScript -----------------------------------------------------------


def _javascript(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    spec = _unquote(raw)
    if not spec.startswith("."):
        return  # a package: not in the workspace
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    candidates = [stem]
    base = stem
    for js in (".js", ".jsx", ".mjs", ".cjs"):  # TypeScript imports ./x.js meaning x.ts
        if stem.endswith(js):
            base = stem[: -len(js)]
    candidates += [base + s for s in _JS_SUFFIXES]
    candidates += [f"{stem}/index{s}" for s in _JS_SUFFIXES]
    for candidate in candidates:
        if index.exists(candidate):
            yield candidate
            return


# --- Go ----------------------------------------------------------------------------------


def _go(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    parts = _unquote(raw).split("/")
    if "." in parts[0]:  # a module path (github.com/x/y/pkg): its tail is a folder here
        yield from index.folder("/".join(parts[1:]), (".go",))
    elif len(parts) > 1:  # the standard library, or a module named without a dot
        folder = "/".join(parts[1:])
        yield from [p for p in index.by_folder.get(folder, []) if p.endswith(".go")][:FOLDER_LIMIT]


# --- Rust --------------------------------------------------------------------------------


def _rust(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    here = _rust_module_dir(path)
    if node.type == "identifier":  # ``mod name;``
        for candidate in (f"{here}/{raw}.rs", f"{here}/{raw}/mod.rs"):
            if index.exists(candidate.lstrip("/")):
                yield candidate.lstrip("/")
                return
        return
    spec = raw.split("{", 1)[0].split(" as ", 1)[0].strip().rstrip(":").strip()
    parts = [p for p in spec.split("::") if p and p != "*"]
    if not parts:
        return
    head = parts[0]
    if head == "crate":
        base = _rust_crate_root(path, index)
    elif head == "self":
        base = here
    elif head == "super":
        base = posixpath.dirname(here)
        while len(parts) > 1 and parts[1] == "super":
            parts = parts[1:]
            base = posixpath.dirname(base)
    else:
        return  # another crate
    rest = parts[1:]
    for end in range(len(rest), 0, -1):
        stem = posixpath.join(base, *rest[:end]) if base else "/".join(rest[:end])
        for candidate in (f"{stem}.rs", f"{stem}/mod.rs"):
            if index.exists(candidate):
                yield candidate
                return


def _rust_module_dir(path: str) -> str:
    folder, name = posixpath.split(path)
    if name in ("lib.rs", "main.rs", "mod.rs"):
        return folder
    return posixpath.join(folder, posixpath.splitext(name)[0])


def _rust_crate_root(path: str, index: PathIndex) -> str:
    folder = posixpath.dirname(path)
    while True:
        for root in ("lib.rs", "main.rs"):
            if index.exists(posixpath.join(folder, root) if folder else root):
                return folder
        if not folder:
            return posixpath.dirname(path)
        folder = posixpath.dirname(folder)


# --- Java --------------------------------------------------------------------------------


def _java(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    spec = raw.strip().removeprefix("import").strip().rstrip(";").strip()
    static = spec.startswith("static ")
    spec = spec.removeprefix("static ").strip()
    parts = spec.split(".")
    if parts[-1] == "*":
        yield from index.folder("/".join(parts[:-1]), (".java",))
        return
    for end in (len(parts), len(parts) - 1) if static else (len(parts),):
        hit = index.nearest("/".join(parts[:end]) + ".java", path)
        if hit:
            yield hit
            return


# --- C and C++ ---------------------------------------------------------------------------


def _include(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    spec = posixpath.normpath(_unquote(raw))
    local = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    if index.exists(local):
        yield local
        return
    hit = index.nearest(spec.lstrip("./"), path)
    if hit:
        yield hit


# --- Ruby --------------------------------------------------------------------------------


def _ruby(node: Any, raw: str, path: str, index: PathIndex) -> Iterator[str]:
    spec = _unquote(raw)
    method = node.parent.parent.child_by_field_name("method") if node.parent else None
    relative = method is not None and method.text == b"require_relative"
    name = spec if spec.endswith(".rb") else spec + ".rb"
    if relative:
        candidate = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
        if index.exists(candidate):
            yield candidate
        return
    hit = index.nearest(name, path, anchored="/" not in spec)
    if hit:
        yield hit


_RESOLVERS = {
    "python": _python,
    "javascript": _javascript,
    "typescript": _javascript,
    "tsx": _javascript,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "c": _include,
    "cpp": _include,
    "ruby": _ruby,
}
