"""How a script's ``import`` and ``export`` statements become bindings (see
:mod:`.walk_script`): the file or workspace package a specifier names, each imported
name, and each re-export (``export { a as b } from``, ``export * from``)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.walk_base import FactWalker

#: What a relative specifier may leave off.
SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


class ScriptModules(FactWalker):
    """The module statements of the script walker, which provides the rest."""

    if TYPE_CHECKING:

        def node(self, node: Any, scope: str, owner: str) -> None: ...

    def source(self, node: Any) -> str | None:
        source = node.child_by_field_name("source")
        if source is None:
            return None
        spec = self.text(source).strip("'\"`")
        if not spec.startswith("."):
            return self.package(spec)
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(self.path), spec))
        base = stem
        for js in (".js", ".jsx", ".mjs", ".cjs"):
            if stem.endswith(js):
                base = stem[: -len(js)]
        candidates = [
            stem,
            *(base + s for s in SUFFIXES),
            *(f"{stem}/index{s}" for s in SUFFIXES),
        ]
        return next((c for c in candidates if self.index.exists(c)), None)

    def package(self, spec: str) -> str | None:
        """A package the workspace holds itself (a monorepo's ``zod`` or ``@acme/ui``):
        its entry (``zod/src/index.ts``, ``zod/index.ts``), or the module ``zod/v4``
        names under it; None for a package from elsewhere."""
        parts = spec.split("/")
        head = 2 if spec.startswith("@") else 1
        folder, rest = parts[head - 1], "/".join(parts[head:])
        for base in (f"{folder}/src", folder):
            stem = f"{base}/{rest}" if rest else base
            for suffix in (*(f"/index{s}" for s in SUFFIXES), *(SUFFIXES if rest else ())):
                wanted = stem + suffix
                hit = self.index.nearest(wanted, self.path)
                if hit is not None:
                    return hit
        return None

    def imports(self, node: Any, scope: str) -> None:
        target = self.source(node)
        binds = self.facts["binds"]
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for child in clause.named_children:
                if child.type == "identifier":  # the default export
                    binds.append(
                        [scope, self.text(child), target, "default", *self.part(child)[1:]]
                    )
                    self.var(scope, self.text(child), "import")
                elif child.type == "namespace_import":
                    for name in child.named_children:
                        binds.append([scope, self.text(name), target, None, *self.part(name)[1:]])
                        self.var(scope, self.text(name), "import")
                elif child.type == "named_imports":
                    for specifier in child.named_children:
                        name = specifier.child_by_field_name("name")
                        alias = specifier.child_by_field_name("alias")
                        if name is None:
                            continue
                        local = self.text(alias if alias is not None else name)
                        binds.append([scope, local, target, self.text(name), *self.part(name)[1:]])
                        self.var(scope, local, "import")
                        if alias is not None:  # {A as B}: B names A too
                            self.ref(scope, scope, "import", [self.part(alias)])

    def export(self, node: Any, scope: str, owner: str) -> None:
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        binds = self.facts["binds"]
        default = any(c.type == "default" for c in node.children)
        if declaration is not None:
            self.node(declaration, scope, owner)
            name = declaration.child_by_field_name("name")
            if default and name is not None:
                # The name is the definition, not a reference to it: column -1, no edge.
                binds.append([scope, "default", self.path, self.text(name), self.part(name)[1], -1])
            return
        if value is not None:
            if default and value.type == "identifier":
                binds.append([scope, "default", self.path, self.text(value), *self.part(value)[1:]])
            self.node(value, scope, owner)
            return
        target = self.source(node) if node.child_by_field_name("source") is not None else self.path
        if node.child_by_field_name("source") is not None and target is None:
            return  # a package's names
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            star = next((c for c in node.named_children if c.type == "namespace_export"), None)
            if star is not None:
                for name in star.named_children:
                    binds.append([scope, self.text(name), target, None, *self.part(name)[1:]])
            elif any(c.type == "*" for c in node.children):
                binds.append([scope, "*", target, None, node.start_point[0] + 1, 0])
            return
        for specifier in clause.named_children:
            name = specifier.child_by_field_name("name")
            alias = specifier.child_by_field_name("alias")
            if name is None:
                continue
            local = self.text(alias if alias is not None else name)
            if target == self.path:
                if local != self.text(name):
                    binds.append([scope, local, target, self.text(name), *self.part(name)[1:]])
                self.ref(scope, owner, "export", [self.part(name)])
            else:
                binds.append([scope, local, target, self.text(name), *self.part(name)[1:]])
            if alias is not None:  # export {A as B}: B names A too
                self.ref(scope, owner, "export", [self.part(alias)])
