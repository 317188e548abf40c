"""The reference graph: which file (and section) refers to which, built with rustworkx.

Nodes are indexed paths. Every reference is resolved; unresolved references and
anchors become doctor problems with a did-you-mean. Only the explicit CueDeck
references (``@...``, ``refs:``, ``depends_on``) *include*: they become the edges that
scenes walk and whose loops are error 1002. Plain markdown links and ``[[wiki]]`` links
are "see also": navigation for readers, which real documentation writes back and forth
all the time. A scene may follow them (``[scene] link_depth``), but a loop among them
is never an error. A code file's imports (``import`` references, resolved by its parser)
are kept apart: :meth:`ReferenceGraph.imports` and :meth:`ReferenceGraph.importers`
walk them; they are neither inclusions nor "see also".
"""

from __future__ import annotations

import posixpath
from collections import deque
from functools import cached_property
from typing import TYPE_CHECKING

import attrs
import rustworkx as rx

from cuedeck.errors import did_you_mean, suggestion_text
from cuedeck.layout import CARDS_DIR, DOCS_DIR
from cuedeck.models import Document, Problem, Reference, names_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from cuedeck.index.coverage import Exclusion

    #: Why a path is not indexed (None: there is no such file): Index.why_not.
    Explain = Callable[[str], Exclusion | None]

#: What to do about a reference to a file the index left out, by the reason.
_NOT_INDEXED_HELP = {
    "": "see `cue doctor`'s list of what is not indexed and why",
    "no parser": "an @ reference or a refs: entry includes any text file, as plain lines; "
    "a link does not",
    "ignored": "remove the .gitignore rule that ignores it, or set [index] gitignore = false",
    "excluded": "change [index] include or exclude in .cuedeck/config.toml",
    "too large": "raise [index] max_file_mb in .cuedeck/config.toml, or cite a smaller file",
    "denied": "[files] deny in .cuedeck/config.toml lists it: no tool reads it",
    "protected": "cite a file outside git's directories and CueDeck's private files",
    "binary": "cite a text file",
    "hard-linked": "replace the hard link with a copy",
    "outside the workspace": "copy the file into the workspace, or remove the link",
    "pending": "run `cue index`",
}


#: Reference kinds that include their target in a scene (the rest are "see also").
INCLUDING = frozenset({"at", "frontmatter", "depends_on", "include"})


@attrs.frozen
class Link:
    """A resolved reference: ``source`` refers to ``target`` (a section when ``anchor``)."""

    source: str
    target: str
    anchor: str | None
    reference: Reference
    followed: bool  # an inclusion (an edge); False: a "see also" link


class ReferenceGraph:
    """Resolved references between the documents of an index, at section granularity.

    A node is a whole file (``docs/api.md``) or one section of it
    (``docs/api.md#login``, by slug). A whole file's edges are all its followed
    links; a section's edges are the followed links written inside its line range, so
    ``a#x -> b#y`` and ``b#z -> a#w`` are not a cycle.
    """

    def __init__(self, documents: Mapping[str, Document], explain: Explain | None = None) -> None:
        self.documents = documents
        self.explain = explain
        self.links: dict[str, list[Link]] = {path: [] for path in documents}
        #: path -> the indexed files it imports, in file order (each once).
        self.import_links: dict[str, list[str]] = {}
        self.problems: list[Problem] = []
        #: Paths the including references name: those indexed, and those not (whether
        #: or not such a file exists), which a workspace may index (Index.adopt).
        self.included: set[str] = set()
        self.unindexed: set[str] = set()
        self._labels: dict[str, tuple[str, str]] | None = None
        by_stem: dict[str, list[str]] = {}
        for path in documents:
            stem = posixpath.splitext(posixpath.basename(path))[0].lower()
            by_stem.setdefault(stem, []).append(path)
        self._by_stem = by_stem
        for path, document in documents.items():
            for reference in document.references:
                self._add(path, reference)
        self.graph: rx.PyDiGraph = rx.PyDiGraph(multigraph=False)
        self._nodes: dict[str, int] = {}
        pending = [self._node(path, None) for path in documents]
        while pending:
            node = pending.pop()
            path, anchor = self.split_key(self.graph[node])
            for link in self.targets(path, anchor):
                if self._contains(path, anchor, link):
                    continue
                before = len(self._nodes)
                target = self._node(link.target, link.anchor)
                if len(self._nodes) > before:
                    pending.append(target)
                self.graph.add_edge(node, target, link)

    def _add(self, source: str, reference: Reference) -> None:
        if reference.kind == "import":
            # Resolved by the parser; a file gone since is not a problem of the importer.
            found = self.import_links.setdefault(source, [])
            if reference.target in self.documents and reference.target not in found:
                found.append(reference.target)
            return
        if reference.kind == "label":
            labelled = self.labels.get(reference.target)
            if labelled is None:
                self.problems.append(self._dead_label(source, reference))
            else:
                self.links[source].append(Link(source, *labelled, reference, False))
            return
        target = self.resolve_target(reference)
        including = reference.kind in INCLUDING
        if target is None:
            if including and reference.kind != "depends_on":
                self.unindexed.add(reference.target)
            self.problems.append(self._dead(source, reference))
            return
        if including:
            self.included.add(target)
        anchor = reference.anchor
        if anchor is not None and self.documents[target].find_section(anchor) is None:
            self.problems.append(self._dead_anchor(source, reference, target))
            return
        followed = reference.kind in INCLUDING
        self.links[source].append(Link(source, target, anchor, reference, followed))

    # -- nodes -----------------------------------------------------------------------------

    def key(self, path: str, anchor: str | None = None) -> str:
        """The node label of a file or of one of its sections (``path#slug``)."""
        if anchor is None:
            return path
        heading = self.documents[path].find_section(anchor)
        return f"{path}#{heading.slug if heading else anchor}"

    @staticmethod
    def split_key(key: str) -> tuple[str, str | None]:
        """``(path, slug)`` of a node label."""
        path, _, slug = key.partition("#")
        return path, slug or None

    def _node(self, path: str, anchor: str | None) -> int:
        label = self.key(path, anchor)
        index = self._nodes.get(label)
        if index is None:
            index = self._nodes[label] = self.graph.add_node(label)
        return index

    def _contains(self, path: str, anchor: str | None, link: Link) -> bool:
        """Whether ``link`` points back into the node it starts from."""
        if link.target != path:
            return False
        if anchor is None:
            return True
        outer = self.section_lines(path, anchor)
        inner = self.section_lines(path, link.anchor)
        return inner[0] >= outer[0] and inner[1] <= outer[1]

    def section_lines(self, path: str, anchor: str | None) -> tuple[int, int]:
        """1-based inclusive line range of a section (the whole file when no anchor)."""
        document = self.documents[path]
        heading = document.find_section(anchor) if anchor else None
        if heading is None:
            return 1, max(document.line_count, 1)
        return heading.line, heading.end_line

    def resolve_target(self, reference: Reference) -> str | None:
        """The indexed path a reference names, or None."""
        if reference.kind != "wiki" and not (
            reference.kind == "frontmatter"
            and not names_path(reference.target)
            and not reference.cites_code
        ):
            return reference.target if reference.target in self.documents else None
        name = reference.target.strip().removesuffix(".md")
        for candidate in (f"{DOCS_DIR}/{name}.md", f"{CARDS_DIR}/{name}.md", f"{name}.md"):
            if candidate in self.documents:
                return candidate
        matches = sorted(self._by_stem.get(posixpath.basename(name).lower(), []))
        return matches[0] if matches else None

    def _dead(self, source: str, reference: Reference) -> Problem:
        wanted = reference.target
        if reference.kind == "wiki":
            pool: Iterable[str] = sorted(
                {posixpath.splitext(posixpath.basename(p))[0] for p in self.documents}
            )
            matches = did_you_mean(wanted, pool)
        else:
            why = self.explain(wanted) if self.explain is not None else None
            if why is not None:
                return Problem(
                    severity="error",
                    code=1001,
                    path=source,
                    line=reference.line,
                    message=f"reference {reference.raw!r} points at {wanted}, which is not "
                    f"indexed: {why.detail}",
                    help=_NOT_INDEXED_HELP.get(why.reason, _NOT_INDEXED_HELP[""]),
                )
            matches = self._near(wanted, source)
        return Problem(
            severity="error",
            code=1001,
            path=source,
            line=reference.line,
            message=f"reference {reference.raw!r} points at {wanted}, which does not exist",
            help=suggestion_text(matches) or "create the file or fix the reference",
        )

    @property
    def labels(self) -> dict[str, tuple[str, str]]:
        """Sphinx labels (lower case) -> ``(path, slug)`` of the section they name: the
        explicit targets of reStructuredText documents (a heading's slug, or one of its
        aliases), then their titles (as Sphinx's ``autosectionlabel`` names them), first
        by path."""
        if self._labels is None:
            found: dict[str, tuple[str, str]] = {}
            prose = [(p, d) for p, d in sorted(self.documents.items()) if d.language == "rst"]
            for path, document in prose:
                for heading in document.headings:
                    for alias in (heading.slug, *heading.aliases):
                        found.setdefault(alias, (path, heading.slug))
            for path, document in prose:
                for heading in document.headings:
                    found.setdefault(" ".join(heading.text.split()).lower(), (path, heading.slug))
            self._labels = found
        return self._labels

    def _dead_label(self, source: str, reference: Reference) -> Problem:
        # A warning: Sphinx extensions CueDeck does not run define labels too.
        matches = did_you_mean(reference.target, self.labels)
        return Problem(
            severity="warning",
            code=1001,
            path=source,
            line=reference.line,
            message=f"reference {reference.raw!r} names label {reference.target!r}, which "
            "no reStructuredText file defines",
            help=suggestion_text(matches) or "add the target (.. _label:) above the section",
        )

    def _near(self, wanted: str, source: str) -> list[str]:
        """Files like ``wanted``: of its kind (a card for a card, a doc for a doc), by
        name, close enough to be a typo, never the file that refers."""

        def kind(path: str) -> str:
            return next((d for d in (CARDS_DIR, DOCS_DIR) if path.startswith(d + "/")), "")

        by_name: dict[str, str] = {}
        for path in sorted(self.documents):
            if kind(path) == kind(wanted) and path != source:
                by_name.setdefault(posixpath.splitext(path.removeprefix(kind(path)))[0], path)
        name = posixpath.splitext(wanted.removeprefix(kind(wanted)))[0]
        return [by_name[found] for found in did_you_mean(name, by_name, cutoff=0.6)]

    def _dead_anchor(self, source: str, reference: Reference, target: str) -> Problem:
        document = self.documents[target]
        matches = did_you_mean(reference.anchor or "", document.anchors)
        code = not document.prose
        what = "symbol or line range" if code else "heading"
        if matches:
            hint = suggestion_text(matches)
        elif document.headings or document.symbols:
            hint = f"check the {'symbols' if code else 'headings'} of {target}"
        elif document.language == "text":  # no parser reads its kind, or it did not parse
            hint = f"{target} is read as plain lines, without symbols: cite it by its lines"
        else:
            hint = f"{target} has no {'symbols' if code else 'headings'} to point at"
        return Problem(
            severity="error",
            code=1001,
            path=source,
            line=reference.line,
            message=f"reference {reference.raw!r}: {target} has no {what} {reference.anchor!r}",
            help=hint,
        )

    def targets(self, path: str, anchor: str | None = None) -> list[Link]:
        """Inclusions made by a file, or by one of its sections, in file order."""
        return self._within(path, anchor, followed=True)

    def see_also(self, path: str, anchor: str | None = None) -> list[Link]:
        """Markdown and wiki links made by a file or one of its sections, in file order."""
        return self._within(path, anchor, followed=False)

    def _within(self, path: str, anchor: str | None, *, followed: bool) -> list[Link]:
        links = [link for link in self.links.get(path, []) if link.followed is followed]
        if anchor is None:
            return links
        first, last = self.section_lines(path, anchor)
        return [link for link in links if first <= link.reference.line <= last]

    def imports(self, path: str) -> list[str]:
        """The indexed files the code file at ``path`` imports, in the order it does."""
        return list(self.import_links.get(path, ()))

    @cached_property
    def _importers(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for source, targets in sorted(self.import_links.items()):
            for target in targets:
                found.setdefault(target, []).append(source)
        return found

    def importers(self, path: str) -> list[str]:
        """The indexed files that import ``path``, sorted."""
        return list(self._importers.get(path, ()))

    def referrers(self, path: str) -> list[str]:
        """Files whose followed references point at ``path`` or one of its sections."""
        return sorted(
            {
                link.source
                for links in self.links.values()
                for link in links
                if link.followed and link.target == path
            }
        )

    def depths(self, start: str) -> dict[str, int]:
        """Every node reachable from node ``start`` with its shortest distance."""
        index = self._nodes.get(start)
        if index is None:
            return {}
        seen = {index: 0}
        queue = deque([index])
        while queue:
            current = queue.popleft()
            for target in self.graph.successor_indices(current):
                if target not in seen:
                    seen[target] = seen[current] + 1
                    queue.append(target)
        return {self.graph[i]: depth for i, depth in seen.items()}

    def find_cycle(self, start: str) -> list[str] | None:
        """A reference loop reachable from node ``start``, as a closed path, or None."""
        index = self._nodes.get(start)
        if index is None:
            return None
        edges = rx.digraph_find_cycle(self.graph, index)
        if not edges:
            return None
        return [self.graph[edges[0][0]]] + [self.graph[target] for _, target in edges]

    @cached_property
    def cycles(self) -> list[list[str]]:
        """One closed path per strongly connected group of nodes that refer in a loop."""
        found = []
        for component in rx.strongly_connected_components(self.graph):
            if len(component) < 2:
                continue
            first = min(component, key=lambda i: self.graph[i])
            cycle = self.find_cycle(self.graph[first])
            if cycle:
                found.append(cycle)
        return sorted(found)
