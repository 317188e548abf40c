"""The types the hooks of :mod:`cuedeck.hookspecs` exchange.

Two kinds: the protocols of what plugins register (a :class:`Searcher`, a
:class:`Pruner`...), and the ``register`` callbacks the hooks receive (a
:class:`RegisterNamed`, a :class:`RegisterTool`...). Import them from
:mod:`cuedeck.hookspecs`, the public contract; they live here so that module holds the
hooks alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

# The masker protocol lives beside the span it finds (masking sits below the contract).
from cuedeck.masking.spans import Masker as Masker

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence
    from pathlib import Path

    from cuedeck.models import (
        CodeQuery,
        Placement,
        RankedSymbol,
        SceneExtra,
        SceneItem,
        SearchFilters,
        SearchResult,
    )
    from cuedeck.settings import RateLimit


#: The workspace a callback is given: always a :class:`cuedeck.workspace.Workspace`. The
#: contract cannot name that class: it sits below the workspace on core's ladder (the
#: workspace reads what plugins register; docs/architecture.md), so a callback is typed
#: loosely here and annotates its own parameter with the class.
WorkspaceArg: TypeAlias = Any


@dataclass(frozen=True)
class Refreshed:
    """What one change of the index changed (``cuedeck_after_refresh``)."""

    #: The index's generation after the change.
    generation: int
    #: Paths added or changed, indexed now (workspace-relative, posix).
    changed: frozenset[str] = frozenset()
    #: Paths no longer indexed.
    removed: frozenset[str] = frozenset()
    #: True when the index cannot list them (rebuilt, read for the first time in this
    #: process, or more changes than it remembers): anything may have changed.
    everything: bool = False
    #: True when a rebuild was asked for (``cue index --rebuild``): rebuild yours too.
    rebuilt: bool = False


#: How a card changed (``cuedeck_card_changed``).
CardChange = Literal["created", "updated", "activated"]


@dataclass(frozen=True)
class CardChanged:
    """One card written by the card store (``cuedeck_card_changed``)."""

    card_id: str
    change: CardChange
    #: The fields the write set (``status``, ``tags``, ``notes``...); empty when created.
    fields: tuple[str, ...] = ()


@runtime_checkable
class Searcher(Protocol):
    """Ranks one workspace's files for a query: a search mode, made for the workspace by
    the factory its plugin registered (:class:`SearcherFactory`).

    The searcher checks its own input: a query or a limit it cannot take is
    :class:`~cuedeck.errors.InvalidInput` (1004). :meth:`Workspace.search` only picks it.
    """

    def search(
        self, query: str, *, limit: int | None, filters: SearchFilters
    ) -> list[SearchResult]:
        """Up to ``limit`` results (None: the searcher's own default), best first,
        restricted by ``filters``."""
        ...


@runtime_checkable
class TextRanker(Searcher, Protocol):
    """A searcher that also ranks texts that are no files (memory's segments) by meaning:
    what a package asks a mode's searcher for, checked with ``isinstance``."""

    def rank_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        """Each text's similarity in meaning to ``query``, in the order given."""
        ...


class SearcherFactory(Protocol):
    """What :func:`~cuedeck.hookspecs.register_searchers` registers: makes a workspace's
    :class:`Searcher`, once per workspace."""

    def __call__(self, workspace: WorkspaceArg, /) -> Searcher: ...


@runtime_checkable
class Pruner(Protocol):
    """Fits scene items, in priority order, into a token budget.

    ``items[0]`` is the active card: keep it whole (the scene has checked that it
    fits). ``item.tokens`` is what an item costs placed in full, and ``count(text)``
    what any other text (an outline) would cost placed, framing included. The scene
    searches for the largest ``budget`` whose rendered result fits its token limit, so
    a pruner may be called several times with different budgets.
    """

    def prune(
        self, items: Sequence[SceneItem], budget: int, count: Callable[[str], int]
    ) -> list[Placement]:
        """One placement per item, in the order given; their ``tokens`` add up to at most
        ``budget`` (the card aside)."""
        ...


@runtime_checkable
class SceneSource(Protocol):
    """Adds items to a card's scene beyond the files it references (memory, for one)."""

    def __call__(self, workspace: WorkspaceArg, card_id: str) -> Iterable[SceneExtra]:
        """Extras for the scene of card ``card_id``, in the order they should appear."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors for semantic search.

    ``model_id`` names the vectors: two embedders whose vectors may differ must have
    different ids (vectors are cached and compared only under the same id). It must be
    known without loading the model, so cached vectors are usable at once.
    """

    model_id: str

    def embed(self, texts: Sequence[str]) -> Any:
        """One float32 row per text, in order (a numpy array; unit length, so a dot
        product is the cosine similarity)."""
        ...


@runtime_checkable
class CodeRanker(Protocol):
    """Ranks a repository's definitions by how much a task needs them (importance)."""

    def rank(self, workspace: WorkspaceArg, query: CodeQuery) -> list[RankedSymbol]:
        """Up to ``query.limit`` definitions, best first, each with its score's parts (a
        :class:`~cuedeck.models.CodeRanking` also says what was left out by rule)."""
        ...


@runtime_checkable
class GraphExtractor(Protocol):
    """A syntactic source of the code graph: the facts of one source file, from its text
    alone (docs/plugin-hooks.md, ``register_code_indexers``, has their format)."""

    #: What its edges are labelled (``syntactic``).
    label: str
    #: The languages it reads (the index's names: ``python``, ``go``...).
    languages: frozenset[str]

    def facts(self, path: str, data: bytes, paths: Collection[str]) -> dict[str, Any] | None:
        """The facts of the file at ``path`` (``paths``: every indexed path, to resolve
        imports against), or None when it cannot read it."""
        ...


@runtime_checkable
class ScipIndexer(Protocol):
    """A precise source of the code graph: a program that writes a SCIP index of the
    workspace's files of some languages (scip-python, scip-typescript...)."""

    label: str
    languages: frozenset[str]
    #: How a user installs it (the note shown when it is missing).
    install: str

    def command(self, root: Path, output: Path) -> list[str] | None:
        """The command line that indexes ``root`` into ``output``, or None when the
        program is not installed."""
        ...


@runtime_checkable
class InitStep(Protocol):
    """A step ``cue init`` offers (a plugin's setup of the workspace, asked first)."""

    question: str

    def needed(self, root: Path) -> bool:
        """Whether the workspace at ``root`` lacks what the step sets up."""
        ...

    def run(self, root: Path) -> list[str]:
        """Set it up; what was done, one line each (``[]``: nothing was needed)."""
        ...


class RegisterNamed(Protocol):
    """The callback of the hooks that register named items (pruners, maskers, embedders...)."""

    def __call__(self, name: str, item: Any, *, replace: bool = False) -> None: ...


class RegisterSearcher(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_searchers`."""

    def __call__(
        self,
        name: str,
        factory: SearcherFactory,
        *,
        default_setting: str | None = None,
        replace: bool = False,
    ) -> None: ...


class RegisterParser(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_parsers`."""

    def __call__(
        self,
        name: str,
        parse: Callable[..., Any],
        *,
        patterns: Sequence[str],
        select: Callable[..., Any] | None = None,
        deferred_counts: bool = False,
        revision: str = "",
        resolves_against: Callable[[str], bool] | None = None,
        replace: bool = False,
    ) -> None: ...


class RegisterSceneSource(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_scene_sources`."""

    def __call__(
        self, name: str, source: SceneSource, *, setting: str | None = None, replace: bool = False
    ) -> None: ...


#: How tools may reach a place a plugin keeps under ``.cuedeck/`` (see ``register_paths``).
PathKind = Literal["private", "control"]


class RegisterPath(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_paths`."""

    def __call__(
        self, name: str, kind: PathKind, *, gitignore: bool = False, replace: bool = False
    ) -> None: ...


class CommandContext(Protocol):
    """What every ``cue`` command gets from the CLI, as ``click.get_current_context().obj``:
    the workspace and the way to print, so a plugin's commands need not import the CLI."""

    @property
    def workspace(self) -> WorkspaceArg:
        """The workspace at ``-C DIR``, ``CUE_WORKSPACE`` or above the cwd (opened now)."""
        ...

    def emit_json(self, value: Any) -> None:
        """Print ``value`` as indented JSON on stdout (masked, like everything printed)."""
        ...

    def console(self, *, stderr: bool = False) -> Any:
        """A rich console on stdout (or stderr), plain when not a terminal."""
        ...


class RegisterCommand(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_commands`."""

    def __call__(
        self,
        command: Any,
        *,
        name: str | None = None,
        help: str | None = None,
        replace: bool = False,
    ) -> None: ...


class RegisterTool(Protocol):
    """The callback of :func:`~cuedeck.hookspecs.register_tools`."""

    def __call__(
        self,
        func: Callable[..., Any] | str,
        *,
        name: str | None = None,
        category: str = "general",
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        rate_limit: RateLimit | None = None,
        permission: str | None = None,
        writes: str | None = None,
        reads_as: str | None = None,
        replace: bool = False,
    ) -> None: ...
