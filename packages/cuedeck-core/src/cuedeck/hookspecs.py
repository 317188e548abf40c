"""The plugin contract: every hook a CueDeck plugin can implement, and what it registers.

A plugin is a module (or object) with functions marked ``@hookimpl``, listed under the
``cuedeck`` entry-point group::

    [project.entry-points.cuedeck]
    my_plugin = "my_package.plugin"

Every ``register_*`` hook receives a ``register`` callback. Names must be unique across
plugins: a second plugin registering a taken name is an error naming both plugins,
unless it passes ``replace=True`` to take the name over on purpose. ``resolve_baseline``
is a question instead: implementations are asked in turn until one answers (pluggy's
``firstresult``). ``cuedeck_after_refresh`` and ``cuedeck_card_changed`` are events:
told to every implementation after the change. docs/plugin-hooks.md
has a section per hook. The types the hooks exchange (what ``register`` accepts, and the
protocols of what is registered) are defined in :mod:`cuedeck.hooktypes` and imported
from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from cuedeck.hooktypes import (
    CardChange,
    CardChanged,
    CodeRanker,
    CommandContext,
    Embedder,
    GraphExtractor,
    InitStep,
    Masker,
    PathKind,
    Pruner,
    Refreshed,
    RegisterCommand,
    RegisterNamed,
    RegisterParser,
    RegisterPath,
    RegisterSceneSource,
    RegisterSearcher,
    RegisterTool,
    SceneSource,
    ScipIndexer,
    Searcher,
    SearcherFactory,
    TextRanker,
    WorkspaceArg,
)

if TYPE_CHECKING:
    from cuedeck.models import Baseline

__all__ = [
    "PROJECT",
    "CardChange",
    "CardChanged",
    "CodeRanker",
    "CommandContext",
    "Embedder",
    "GraphExtractor",
    "InitStep",
    "Masker",
    "PathKind",
    "Pruner",
    "Refreshed",
    "RegisterCommand",
    "RegisterNamed",
    "RegisterParser",
    "RegisterPath",
    "RegisterSceneSource",
    "RegisterSearcher",
    "RegisterTool",
    "SceneSource",
    "ScipIndexer",
    "Searcher",
    "SearcherFactory",
    "TextRanker",
    "WorkspaceArg",
    "hookimpl",
    "hookspec",
]

PROJECT = "cuedeck"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_searchers(register: RegisterSearcher) -> None:
    """Register search modes.

    Called once per plugin host, the first time searchers are looked up
    (:meth:`Workspace.search`, ``cue plugins``). ``register(name, factory)`` takes a mode
    name (``keyword``, ``semantic``, ``hybrid``...) and ``factory(workspace) ->``
    :class:`Searcher`, called once per workspace, the first time the mode is searched:
    it may read the workspace's config and hold what it builds. The searcher checks its
    own query and limit; :meth:`Workspace.search` only picks it by mode.
    ``default_setting="section.key"`` (optional) names a setting of the plugin's own
    section whose value is the mode :meth:`Workspace.search` uses when asked for none;
    the search package passes ``"search.mode"``.

    Example::

        @hookimpl
        def register_searchers(register):
            register("title", TitleSearcher)  # TitleSearcher(workspace) is a Searcher
    """


@hookspec
def register_pruners(register: RegisterNamed) -> None:
    """Register pruners, which fit a scene to its token budget.

    Called when a scene is built. ``register(name, pruner)`` takes the name that
    ``[scene] pruner`` (or ``cue scene --pruner``) selects and a :class:`Pruner`. Core
    registers ``greedy`` (stop at the first document that does not fit) and ``outline``
    (the default: outline or drop what does not fit, and go on).

    Example::

        @hookimpl
        def register_pruners(register):
            register("headings-only", HeadingsOnlyPruner())
    """


@hookspec
def register_maskers(register: RegisterNamed) -> None:
    """Register secret maskers, applied to every text that leaves the process.

    Called when the first text is masked. ``register(name, masker)`` takes a
    :class:`Masker`; every registered masker runs, and overlapping spans are merged
    (the first masker's rule names the result). ``[masking]`` config (disabled rules,
    allowed paths and values, extra patterns) applies to every masker. Core registers
    ``builtin`` (the rule set of :mod:`cuedeck.masking.secret_rules`, docs/masking.md).

    Example::

        @hookimpl
        def register_maskers(register):
            register("acme", RegexMasker("acme-key", r"acme_[A-Za-z0-9]{32}"))
    """


@hookspec
def register_token_counters(register: RegisterNamed) -> None:
    """Register token counters.

    Called when a workspace opens. ``register(name, counter)`` takes a
    :class:`~cuedeck.token_counts.TokenCounter`, or None when the counter cannot work on this
    machine (so ``auto`` skips it). ``[tokens] counter`` picks one by name; ``auto``
    prefers ``o200k``, then ``estimate``.

    Example::

        @hookimpl
        def register_token_counters(register):
            register("words", WordCounter())
    """


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Register tools: typed functions served to MCP, the CLI and Python alike.

    Called when tools are first looked up (``cue mcp``, ``cue plugins``, a command that
    runs a tool). A tool is a function whose first parameter is ``workspace`` (the open
    :class:`Workspace`, supplied by the caller) and whose other parameters are typed,
    optionally with ``Annotated[..., pydantic.Field(...)]`` constraints. Its docstring's
    first line is the summary. ``register(func, name=..., category=..., read_only=...,
    destructive=..., idempotent=..., rate_limit=..., permission=..., writes=...)`` records it; the
    flags become MCP annotations. The flags also say the permission a caller needs
    (read-only: ``query_repos``, the ``read`` role; destructive: ``destructive_operations``,
    ``admin``; else ``repository:write``, ``write``); ``permission`` names another of
    :data:`cuedeck.plugins.tools.PERMISSIONS` (``manage_users``: ``admin``). ``rate_limit``
    (a :class:`~cuedeck.settings.RateLimit`: ``per_minute`` and ``burst``) limits each MCP
    client's calls of the tool; ``[rate_limits.<tool>]`` in config.toml overrides it, and
    ``cue init`` shows it. ``writes`` names the argument
    holding the path (or list of paths; None meaning the whole workspace) the tool
    changes: the tool then takes ``force`` too, and a call on paths another agent's claim
    holds is refused before the tool runs unless forced
    (:func:`cuedeck.plugins.claims.guard_writes`).

    ``func`` is the function or its import path, ``"package.module:function"`` (the
    name defaults to the part after ``:``). A path is imported when the tool is first
    used, so a command that runs one tool imports one module, not every plugin's tools;
    a path that does not load is :class:`~cuedeck.errors.ToolLoadFailed` (1004) when
    used, and a failure of its plugin in ``cue plugins``, ``cue doctor`` and the MCP
    server, which leaves the tool out.

    Example::

        @hookimpl
        def register_tools(register):
            # my_plugin.tools is imported when word_count is first used
            register("my_plugin.tools:word_count", category="docs", read_only=True)
            register(line_count, category="docs", read_only=True)  # a function works too
            # At most 20 calls a minute per MCP client, 30 in a burst.
            register("my_plugin.tools:reindex", rate_limit=RateLimit(per_minute=20, burst=30))
            # Its calls on files another agent claimed are refused unless forced.
            register("my_plugin.tools:rename_file", writes="file_path")
    """


@hookspec
def register_commands(register: RegisterCommand) -> None:
    """Register commands of the ``cue`` command line.

    Called by ``make_cli()`` once. ``register(command)`` takes a ``click.Command`` (a
    group too), named by its ``.name`` unless ``name=`` says otherwise, or its import path
    ``"package.module:attribute"`` (named by the part after ``:``), imported only when the
    command runs: with ``help=``, its first help line, ``cue --help`` lists it without
    importing it either. A path that does not load is error 1004 naming the plugin. A name
    another plugin took is an error naming both, unless ``replace=True`` takes it over on
    purpose. A registered tool becomes a command with the CLI package's
    ``tool_command(tool_name)``. CueDeck's own commands (``init``, ``scene``...) are
    registered by path by the CLI package. A command reaches the workspace and prints
    through the :class:`CommandContext` the CLI puts on click's context
    (``click.get_current_context().obj``). Keep heavy imports inside the commands.

    Example::

        @hookimpl
        def register_commands(register):
            # my_plugin.commands is imported when `cue hello` runs
            register("my_plugin.commands:hello", help="Say hello to the workspace.")
            register(tool_command("word_count", name="words"))
    """


@hookspec
def register_checks(register: RegisterNamed) -> None:
    """Register health checks that ``cue doctor`` runs.

    Called once per plugin host, when doctor runs. ``register(name, check)`` takes
    ``check(workspace) -> Iterable[Problem]``: each :class:`~cuedeck.models.Problem` is
    an error or a warning with a code, the file and line where known, and help. A check
    that raises is reported as a warning naming it, and doctor goes on. The tasks
    package checks cards (values of the wrong type, unknown statuses) this way.

    Example::

        @hookimpl
        def register_checks(register):
            register("notes", lambda workspace: [Problem("warning", 1004, "n.md", 3, "x")])
    """


@hookspec
def register_processes(register: RegisterNamed) -> None:
    """Register listers of the processes a plugin runs in the background for a workspace.

    Called when ``cue status``, ``cue doctor`` or the board asks what runs.
    ``register(name, lister)`` takes ``lister(workspace) ->
    Iterable[BackgroundProcess]``: each :class:`~cuedeck.models.BackgroundProcess` has
    its kind, pid, start time and how it ends (an idle limit, the end of its work). A
    lister that raises is logged and skipped. Core lists the workspace's watcher; the
    MCP package its resident servers, the search package its detached embedder.

    Example::

        @hookimpl
        def register_processes(register):
            register("indexer", lambda workspace: running_indexers(workspace.root))
    """


@hookspec
def register_services(register: RegisterNamed) -> None:
    """Register workspace services: objects built from a workspace on first use.

    ``register(name, factory)`` takes a factory ``factory(workspace) -> object``; the
    object is then :meth:`Workspace.service` ``(name)``. The tasks package registers
    ``cards`` (its card store) this way.

    Example::

        @hookimpl
        def register_services(register):
            register("notes", NoteStore)
    """


@hookspec
def register_scene_sources(register: RegisterSceneSource) -> None:
    """Register scene sources: more items for a card's scene than the files it references.

    Called when a scene is built. ``register(name, source, setting=None)`` takes a
    :class:`SceneSource`, ``source(workspace, card_id) -> Iterable[SceneExtra]``, and the
    ``"section.key"`` of a boolean setting (of a section the plugin registers) that
    switches it on and off. Each
    :class:`~cuedeck.models.SceneExtra` names a workspace file (its bytes' sha256 makes
    ``cue scene --check`` notice a change), its text, a priority and a role; the scene
    masks it, counts it in the budget, lets the pruner fit it and lists it in the
    manifest. The memory plugin registers ``memory`` (the card's pinned segments and
    decisions at priority 40) with ``setting="memory.scene"``: ``[memory] scene = false``
    leaves that source out.

    Example::

        @hookimpl
        def register_scene_sources(register):
            register("notes", lambda ws, card: [SceneExtra("notes.md", "Notes", text, sha)])
    """


@hookspec
def register_embedders(register: RegisterNamed) -> None:
    """Register embedders, the models behind semantic and hybrid search.

    Called the first time a workspace's search engine needs vectors (a semantic or
    hybrid search, ``cue index --semantic``). ``register(name, factory)`` takes the name
    ``[search] embedder`` selects and ``factory(workspace) -> Embedder``, called once per
    search engine: it may read the workspace's config and should share a loaded model
    between calls. The search package registers ``minilm`` (all-MiniLM-L6-v2 int8, the
    default) and ``onnx`` (the sentence-transformers-style export ``[search] onnx_dir``
    points at). Vectors are cached per :attr:`Embedder.model_id`, never mixed.

    Example::

        @hookimpl
        def register_embedders(register):
            register("hashing", lambda workspace: HashingEmbedder(dimensions=256))
    """


@hookspec
def register_parsers(register: RegisterParser) -> None:
    """Register parsers: what turns a kind of file into the document the index stores.

    Called when a workspace's index is first built (any command or tool that reads the
    workspace). ``register(name, parse, patterns=[...])`` takes:

    - ``parse(path, data, context) -> Document``: the workspace-relative POSIX path, the
      file's raw bytes and a :class:`~cuedeck.index.parsers.ParseContext` (``count_tokens``,
      and ``paths``, every path the index covers, to resolve imports against). The
      :class:`~cuedeck.models.Document` holds the file's sha256, size, line count,
      tokens and title, its sections (``headings`` for prose, ``symbols`` for code: a
      name to use as an anchor, exact 1-based line ranges, a kind), its ``references``
      and any ``problems`` (warnings ``cue doctor`` shows). Raise
      :class:`~cuedeck.index.parsers.SkipFile` for a file to leave out (generated, say). It
      runs in forked worker processes on a cold index: build heavy objects on first use.
    - ``patterns``: globs of the files it reads, matched on the file name (``*.todo``,
      ``Makefile``) or, with a ``/``, on the whole path. A file claimed by two parsers
      goes to the one registered later (entry points load after core, in name order).
    - ``select(root, config)`` (optional): called once per refresh; returns
      ``(path, size) -> reason | None``, which leaves files out before they are read.
    - ``deferred_counts`` (optional, False): True when the parser's only use of
      ``count_tokens`` is the document's ``tokens``, counted on the file's whole decoded
      text. A refresh of many files then gives it a counter that answers ``-1`` and the
      index counts exactly when the document is first read (exact counting costs more
      than parsing).
    - ``resolves_against`` (optional): ``(path) -> bool``, the paths whose coming or going
      changes what the parser made of other files (references resolved against
      ``context.paths``); when one comes or goes, the files it claims are parsed again.

    What is indexed is the files a parser claims that ``[index] include`` admits (every
    one by default) and ``exclude`` and ``.gitignore`` do not leave out. Core registers
    ``markdown`` (``*.md``); a code plugin registers its languages the same way. Search
    splits a document into its headings or symbols, ``read_doc`` and scenes read a section
    by its anchor.

    Example::

        @hookimpl
        def register_parsers(register):
            register("todo", parse_todo_list, patterns=["*.todo"])
    """


@hookspec
def register_settings(register: RegisterNamed) -> None:
    """Register config sections: a plugin's own ``[section]`` of ``.cuedeck/config.toml``.

    Called when a workspace's config loads (and by ``cue init``, ``cue doctor`` and ``cue
    plugins``). ``register(name, settings)`` takes the TOML table name and an attrs class
    whose fields are made with :func:`cuedeck.settings.setting` (a default, help text,
    choices or a range). The loaded section is ``config.section(name, settings)``;
    ``cue init`` writes it commented out, a wrong value is an error 1004 naming the key
    and line, an unknown key a warning of ``cue doctor``, and ``CUEDECK_<NAME>_<KEY>``
    overrides a key. A section whose keys are names the user picks (``[rate_limits.<tool>]``)
    reads its own table instead (:class:`cuedeck.settings.TableSection`). Core registers
    ``scene``, ``index``, ``tokens``, ``watch``, ``masking``, ``files`` and ``docs``; a
    name already registered is an error naming both plugins.

    Example::

        @attrs.frozen
        class NotesSettings:
            "``[notes]``: the notes tool."

            folder: str = setting("notes", "Where notes are kept, relative to the root.")

        @hookimpl
        def register_settings(register):
            register("notes", NotesSettings)  # workspace.config.section("notes", NotesSettings)
    """


@hookspec
def register_paths(register: RegisterPath) -> None:
    """Register the places a plugin keeps under ``.cuedeck/`` that tools may not reach.

    Called once per plugin host, when a workspace first checks a path (and by ``cue
    init`` and ``cue doctor`` for the git-ignored ones). ``register(name, kind,
    gitignore=False)`` takes the name of an entry directly under a ``.cuedeck/`` folder
    (``"notes.sqlite3"``; a folder may end with ``/``) and its kind: ``"private"`` (no
    tool reads or writes it: caches, secrets' hashes, one person's state) or
    ``"control"`` (tools may read it, never write it: only the plugin's own code does).
    The rule holds in this workspace's ``.cuedeck/`` and in any nested one, on the path
    as asked and on its real path. ``gitignore=True`` makes ``cue init`` add
    ``.cuedeck/<name>`` to ``.gitignore`` and ``cue doctor`` check git agrees. Core keeps
    its own (``.cache``, ``state.json``, ``config.toml``...) whatever is loaded; a name
    already registered is an error naming both plugins.

    Example::

        @hookimpl
        def register_paths(register):
            register("notes/", "control", gitignore=True)  # written by the notes tools only
    """


@hookspec
def register_code_rankers(register: RegisterNamed) -> None:
    """Register code rankers: what puts a "related code" tier into scenes and ranks
    ``cue map``.

    Called when a scene is built and when a repository map is drawn.
    ``register(name, ranker)`` takes a :class:`CodeRanker`, whose ``rank(workspace,
    query)`` gets a :class:`~cuedeck.models.CodeQuery` (the card's text, the code it
    cites, an error stack) and returns :class:`~cuedeck.models.RankedSymbol` entries,
    best first, each with the weighted parts of its score. ``[scene] code_ranker``
    picks one by name (``importance`` by default: the code plugin's, from the reference
    graph, recent changes, an error stack and the card's words); a scene has no related
    code when none is registered.

    Example::

        @hookimpl
        def register_code_rankers(register):
            register("recent-only", RecentChangesRanker())
    """


@hookspec(firstresult=True)
def resolve_baseline(workspace: WorkspaceArg, since: str) -> Baseline | None:
    """The baseline ``since`` names: what ``since`` can name in a scene (``cue scene
    --since``, ``build_scene(since=...)``).

    Called when a scene is asked for the changes since a point, one implementation after
    another until one answers (pluggy's ``firstresult``): None when ``since`` is not one
    of its names, else a :class:`~cuedeck.models.Baseline` holding the text then of every
    file that may have changed. The scene shows each changed file as hunks with line
    numbers. The git plugin answers any commit, branch or tag, the memory plugin a task
    snapshot's id (its file hashes).

    Example::

        @hookimpl
        def resolve_baseline(workspace, since):
            return read_backup(workspace) if since == "backup" else None
    """


@hookspec
def register_code_indexers(register: RegisterNamed) -> None:
    """Register code indexers: the sources of the code graph behind the code-intelligence
    tools (``scip_definition``, ``scip_references``... ``cue graph``).

    Called when the code graph is first brought in step with the index, and by ``cue
    index --scip`` (``scip_generate``). ``register(name, indexer)`` takes one of two kinds:

    - a :class:`GraphExtractor` (``label = "syntactic"``): ``facts(path, data, paths)``
      reads one file of its ``languages`` and returns its facts (definitions, imports,
      the names each scope binds, and every name written in an expression, as chains:
      docs/plugin-hooks.md has the format), which the graph resolves through imports
      and scopes. It runs at every refresh, on the files that changed; a third party
      adds a language this way. The code plugin registers ``syntactic`` for every
      language it parses.
    - a :class:`ScipIndexer` (``label = "scip"``): ``command(root, output)`` is the
      command line of an installed program that writes a SCIP index of the workspace
      (None when it is not installed: the reply says ``install``, never fails). It runs
      in the background when asked; its edges replace the syntactic ones of every file
      it indexed while the file is unchanged. The code plugin registers ``scip-python``,
      ``scip-typescript``, ``scip-go`` and ``scip-java``.

    Example::

        @hookimpl
        def register_code_indexers(register):
            register("scip-ruby", ScipRuby())  # languages={"ruby"}, install="gem install ..."
    """


@hookspec
def register_init_steps(register: RegisterNamed) -> None:
    """Register steps of ``cue init``: setup a plugin offers a workspace, asked first.

    Called by ``cue init``. ``register(name, step)`` takes a name (``cue init`` gets the
    options ``--NAME`` and ``--no-NAME`` for scripts) and an :class:`InitStep`: its
    ``question``, ``needed(root)`` (is anything missing?) and ``run(root)`` (set it up,
    returning what was done). Without an option, ``cue init`` asks the question when the
    step is needed and a person is at the terminal, and otherwise leaves it and says how
    to run it. The tasks plugin registers ``merge-driver`` (git's merge driver for cards).

    Example::

        @hookimpl
        def register_init_steps(register):
            register("pre-commit", PreCommitStep())  # cue init --pre-commit
    """


@hookspec
def register_index_reports(register: RegisterNamed) -> None:
    """Register reporters of the indexes a plugin keeps for a workspace.

    Called when a team server describes a shared repository (``global_repo_status``, the
    ``cidx-meta-global`` catalog). ``register(name, reporter)`` takes
    ``reporter(workspace) -> IndexReport | None`` (:class:`cuedeck.serving.indexes.IndexReport`:
    whether the index is ready, a one-line summary and its figures); None when the
    plugin keeps no such index there. A reporter must not build anything: it says what
    is there. One that raises is logged and skipped. Core reports the document index,
    the search package its keyword postings and vectors, the code package its graph and
    SCIP indexes.

    Example::

        @hookimpl
        def register_index_reports(register):
            register("ctags", lambda workspace: {"name": "ctags", "ready": True,
                                                 "summary": "1,204 tags", "details": {}})
    """


@hookspec
def cuedeck_after_refresh(workspace: WorkspaceArg, refreshed: Refreshed) -> None:
    """The index changed: ``refreshed`` says what (paths added or changed, removed, or
    ``everything``).

    Told by the workspace, the one place that changes its index (a walk, a watcher's
    paths, a file a tool wrote), once its lock is released: an implementation may use the
    workspace and its services. Not told when nothing changed. Keep it cheap: it runs on
    the path of the command or call that refreshed (search brings an engine already built
    in step here; it builds none).

    Example::

        @hookimpl
        def cuedeck_after_refresh(workspace, refreshed):
            stale.update(refreshed.changed | refreshed.removed)
    """


@hookspec
def cuedeck_card_changed(workspace: WorkspaceArg, changed: CardChanged) -> None:
    """A card was created, updated or made the active card through the card store (its
    one write path, in the plugin that keeps cards), after the write.

    Cards edited outside the store are files like any other: ``cuedeck_after_refresh``
    reports them.

    Example::

        @hookimpl
        def cuedeck_card_changed(workspace, changed):
            if changed.change == "activated":
                follow(changed.card_id)
    """
