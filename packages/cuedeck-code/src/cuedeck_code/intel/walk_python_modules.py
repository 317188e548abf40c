"""How a Python file's ``import`` statements become bindings (see :mod:`.walk_python`):
the file, package or namespace folder each module name means, relative or absolute,
nearest the importing file first (a ``src/`` layout's package from ``tests/``)."""

from __future__ import annotations

import posixpath
import weakref
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import RECEIVERS
from cuedeck_code.intel.walk_base import FactWalker

if TYPE_CHECKING:
    from cuedeck_code.imports import PathIndex


class PythonModules(FactWalker):
    """The import statements of the Python walker, which provides the rest."""

    receivers = RECEIVERS["python"]

    def imports(self, node: Any, scope: str) -> None:
        binds = self.facts["binds"]
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                dotted = (
                    child.child_by_field_name("name") if child.type == "aliased_import" else child
                )
                alias = (
                    child.child_by_field_name("alias") if child.type == "aliased_import" else None
                )
                if dotted is None:
                    continue
                parts = self.text(dotted).split(".")
                if alias is not None:
                    target = self.module(0, parts)
                    binds.append([scope, self.text(alias), target, None, line, self.column(alias)])
                else:
                    target = self.module(0, parts[:1]) or self.folder(parts)
                    binds.append([scope, parts[0], target, None, line, self.column(dotted)])
                self.var(scope, parts[0] if alias is None else self.text(alias), "import")
            return
        module = node.child_by_field_name("module_name")
        if module is None:
            return
        dots, parts = 0, []
        if module.type == "relative_import":
            for child in module.named_children:
                if child.type == "import_prefix":
                    dots = len(self.text(child))
                elif child.type == "dotted_name":
                    parts = self.text(child).split(".")
        else:
            parts = self.text(module).split(".")
        target = self.module(dots, parts)
        if target is None and not dots:
            target = self.folder(parts, whole=True)
        if any(child.type == "wildcard_import" for child in node.named_children):
            binds.append([scope, "*", target, None, line, 0])
            return
        for child in node.children_by_field_name("name"):
            dotted = child.child_by_field_name("name") if child.type == "aliased_import" else child
            alias = child.child_by_field_name("alias") if child.type == "aliased_import" else None
            if dotted is None:
                continue
            name = self.text(dotted)
            local = self.text(alias) if alias is not None else name
            column = self.column(dotted)
            binds.append([scope, local, target, name, dotted.start_point[0] + 1, column])
            self.var(scope, local, "import")

    def module(self, dots: int, parts: list[str]) -> str | None:
        """The file of the module ``parts`` (``dots`` levels up for a relative import)."""
        index = self.index
        if dots:
            base = posixpath.dirname(self.path)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, *parts) if parts else base
            for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
                if index.exists(candidate):
                    return candidate
            return f"dir:{stem}" if not parts or stem in index.by_folder else None
        if not parts:
            return None
        stem = "/".join(parts)
        anchored = len(parts) == 1
        for suffix in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
            hit = index.nearest(suffix, self.path, anchored=anchored)
            if hit:
                return hit
        if anchored:  # a package of a src/ layout, imported from tests/ or docs/
            return index.nearest(f"{stem}/__init__.py", self.path)
        return None

    def folder(self, parts: list[str], *, whole: bool = False) -> str | None:
        """A namespace package (a folder without ``__init__.py``) as ``dir:<folder>``:
        of ``parts[0]`` (``import a.b.c`` binds ``a``), or of all of ``parts``."""
        wanted = "/".join(parts)
        for suffix in (f"{wanted}.py", f"{wanted}/__init__.py"):
            hit = self.index.nearest(suffix, self.path)
            if hit:
                head = hit[: len(hit) - len(suffix)]
                keep = parts if whole else parts[:1]
                return "dir:" + head + "/".join(keep)
        found = _folder_ending(self.index, wanted)
        if found is not None:
            head = found[: len(found) - len(wanted)]
            keep = parts if whole else parts[:1]
            return "dir:" + head + "/".join(keep)
        return None


#: Per path index, the first folder ending in a module's dotted path (a scan of every
#: folder, asked again by every file importing a module from outside the workspace).
_ENDINGS: weakref.WeakKeyDictionary[PathIndex, dict[str, str | None]] = weakref.WeakKeyDictionary()


def _folder_ending(index: PathIndex, wanted: str) -> str | None:
    """The first of ``index``'s folders that is ``wanted`` or ends in ``/wanted``."""
    endings = _ENDINGS.get(index)
    if endings is None:
        endings = _ENDINGS[index] = {}
    if wanted not in endings:
        tail = "/" + wanted
        endings[wanted] = next(
            (f for f in index.by_folder if f == wanted or f.endswith(tail)), None
        )
    return endings[wanted]
