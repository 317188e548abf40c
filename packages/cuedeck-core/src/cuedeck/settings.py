"""Core's settings of ``.cuedeck/config.toml``, and how any plugin declares its own.

A config section is an attrs class whose fields are made with :func:`setting` (a
default, help text, allowed choices or range); plugins register theirs through the
``register_settings`` hook, core registers the ones below. The schema only:
:mod:`cuedeck.config` loads a workspace's file and environment into it. docs/config.md
documents every section's keys, and a test keeps them equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

import attrs

from cuedeck.errors import InvalidInput, MissingExtra
from cuedeck.layout import CONFIG_PATH, SCENE_PATH
from cuedeck.models import Problem  # noqa: TC001 (config evaluates these annotations)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

S = TypeVar("S")


def setting(
    default: Any,
    doc: str,
    choices: tuple[str, ...] = (),
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    names: str | None = None,
    also: tuple[str, ...] = (),
    unavailable_help: str | None = None,
    moved_from: str | None = None,
) -> Any:
    """A field of a settings class: its default, its help text (``doc``, shown by ``cue
    init`` and docs/config.md) and what values it accepts.

    ``choices`` and ``minimum``/``maximum`` are checked when the config loads. ``names``
    is a ``register_*`` hook whose registered names the value must be one of (``also``
    lists other accepted values, such as ``auto``): ``cue doctor`` checks it, and
    :meth:`Config.unavailable` explains a miss with ``unavailable_help``. ``moved_from``
    (``"section.key"``) is where the key used to be: a value found there still applies,
    with a warning.
    """
    metadata = {
        "doc": doc,
        "choices": choices,
        "minimum": minimum,
        "maximum": maximum,
        "names": names,
        "also": also,
        "unavailable_help": unavailable_help,
        "moved_from": moved_from,
    }
    if isinstance(default, list | dict):
        value = default
        return attrs.field(factory=lambda: type(value)(value), metadata=metadata)
    return attrs.field(default=default, metadata=metadata)


#: The earlier name of :func:`setting`, kept while other branches that use it merge.
_setting = setting


@attrs.frozen
class SceneSettings:
    """``[scene]``: how ``cue scene`` packs the active card and its references."""

    token_limit: int = setting(32000, "Token budget of a scene.", minimum=1)
    pruner: str = setting(
        "outline",
        "Registered pruner that fits documents to the budget.",
        names="register_pruners",
        unavailable_help="pick a registered pruner (`cue plugins` lists them; built in: "
        "greedy, outline)",
    )
    global_docs: list[str] = setting(
        [],
        "Docs (`path` or `path#heading`) added to every scene at priority 10 (TOML key `global`).",
    )
    format: str = setting("markdown", "Default output format.", ("markdown", "xml", "json"))
    output: str = setting(SCENE_PATH, "Where `cue scene` writes the scene.")
    clipboard: bool = setting(True, "Copy the scene to the clipboard after writing it.")
    link_depth: int = setting(
        1,
        'Hops of plain markdown and wiki links ("see also") a scene follows from what it '
        "includes, at priority 20; 0 follows none.",
        minimum=0,
    )
    code_share: float = setting(
        0.25,
        'Most of the budget "related code" may take: the definitions the code ranker finds '
        "for the card, whole while they fit, then as signatures (0 adds none).",
        minimum=0.0,
        maximum=1.0,
    )
    code_ranker: str = setting(
        "importance",
        "Registered code ranker behind related code and `cue map` (a code plugin's: importance).",
        names="register_code_rankers",
        unavailable_help='install the code plugin for "importance", or pick a registered '
        "code ranker (`cue plugins`)",
    )


@attrs.frozen
class IndexSettings:
    """``[index]``: which files the index reads."""

    include: list[str] = setting(
        ["**/*"],
        "Globs (gitignore syntax) of the files to index, each read by the parser that claims "
        "it: markdown, reStructuredText, AsciiDoc, plain text, and whatever installed parsers "
        'read (`["**/*.md"]`: markdown only).',
    )
    exclude: list[str] = setting(
        ["node_modules/", ".venv/", "venv/", ".tox/", "site-packages/", "dist/", "build/"],
        "Globs never indexed, on top of .gitignore.",
    )
    gitignore: bool = setting(True, "Honour .gitignore files.")
    max_file_mb: float = setting(64.0, "Larger files are skipped with a warning.", minimum=0.001)


@attrs.frozen
class TokenSettings:
    """``[tokens]``: how tokens are counted."""

    counter: str = setting(
        "auto",
        "Registered token counter; `auto` is o200k when installed, else the estimate.",
        names="register_token_counters",
        also=("auto",),
        unavailable_help='set counter = "auto", or install the counter (`cue plugins` lists '
        "what is there; docs/tokens.md)",
    )


@attrs.frozen
class WatchSettings:
    """``[watch]``: ``cue watch``, and the workspace's watcher process."""

    debounce_ms: int = setting(500, "Changes within this window produce one rebuild.", minimum=0)
    watcher_idle_seconds: int = setting(
        900,
        "How long the workspace's watcher (the process `cue search` starts to learn what "
        "changed without a walk; Linux) stays after its last question (seconds; "
        "docs/freshness.md).",
        minimum=1,
    )


@attrs.frozen
class MaskingSettings:
    """``[masking]``: secret masking of everything that leaves the process."""

    enabled: bool = setting(True, "Mask secrets in scenes, search snippets and tool replies.")
    disabled_rules: list[str] = setting([], "Names of built-in rules to switch off.")
    allow_paths: list[str] = setting([], "Globs of files whose content is never masked.")
    allow_values: list[str] = setting([], "Exact values that are never masked.")
    patterns: dict[str, str] = setting(
        {}, "Extra rules: name = regular expression (the whole match is masked)."
    )


@attrs.frozen
class FileSettings:
    """``[files]``: the file tools (get_file_content, create_file, edit_file, delete_file)."""

    deny: list[str] = setting(
        [".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*"],
        "Globs (gitignore syntax) of files the file tools never read or write.",
    )
    max_tokens: int = setting(
        5000,
        "Reply budget of get_file_content and the tools that page like it, in tokens.",
        minimum=1,
    )


@attrs.frozen
class DocSettings:
    """``[docs]``: reading docs (read_doc)."""

    max_tokens: int = setting(
        5000,
        "Default reply budget of read_doc, in tokens.",
        minimum=1,
        moved_from="mcp.read_doc_max_tokens",
    )


#: Core's own sections, in the order ``cue init`` shows them; plugins' follow.
CORE_SECTIONS: dict[str, type] = {
    "scene": SceneSettings,
    "index": IndexSettings,
    "tokens": TokenSettings,
    "watch": WatchSettings,
    "masking": MaskingSettings,
    "files": FileSettings,
    "docs": DocSettings,
}


@runtime_checkable
class TableSection(Protocol):
    """A section whose keys are names the user picks, each a table of its own
    (``[<section>.<name>]``), rather than fields: its class reads its table itself.

    Register it like any section (``register_settings``). When the config loads, the
    section's table goes to ``from_table(table, fail)``, where ``fail(key, reason, value)``
    is the InvalidInput (1004) to raise for a bad ``section.name`` (it knows the line); a
    workspace without the table gets the class's defaults, ``cls()``. ``cue init`` writes
    the commented lines ``template(plugins)`` returns (``plugins``: the plugin host).
    Environment variables do not reach such a section.
    """

    @classmethod
    def from_table(
        cls, table: dict[str, Any], fail: Callable[[str, str, Any], InvalidInput]
    ) -> Any: ...

    @classmethod
    def template(cls, plugins: Any) -> list[str]: ...


@attrs.frozen
class RateLimit:
    """A token bucket: ``per_minute`` refill rate and ``burst`` capacity."""

    per_minute: int
    burst: int


def _core_defaults() -> dict[str, Any]:
    return {name: cls() for name, cls in CORE_SECTIONS.items()}


@attrs.frozen
class Config:
    """All settings of a workspace, plus the warnings met while loading them.

    ``sections`` holds every registered section by its TOML name, core's and plugins';
    :meth:`section` reads one, typed. Core's own are properties too (``config.scene``).
    """

    sections: dict[str, Any] = attrs.field(factory=_core_defaults)
    warnings: tuple[Problem, ...] = ()
    #: ``section.key`` -> its line in config.toml, to point at a value found wrong later.
    lines: dict[str, int] = attrs.field(factory=dict, eq=False)

    @overload
    def section(self, name: str) -> Any: ...

    @overload
    def section(self, name: str, of_type: type[S]) -> S: ...

    def section(self, name: str, of_type: type[Any] | None = None) -> Any:
        """The ``[name]`` section, checked to be an ``of_type`` when one is given;
        MissingExtra (1008) when no installed plugin registers it."""
        found = self.sections.get(name)
        if found is None:
            raise MissingExtra.needs(
                f"no installed plugin has the config section [{name}] (`cue plugins` lists "
                "the installed ones)",
                section=name,
            )
        if of_type is not None and not isinstance(found, of_type):
            raise InvalidInput(
                f"config section [{name}] is a {type(found).__name__}, not a "
                f"{of_type.__name__} (two plugins use one section name?)",
                field=name,
            )
        return found

    @property
    def scene(self) -> SceneSettings:
        """``[scene]``."""
        return self.section("scene", SceneSettings)

    @property
    def index(self) -> IndexSettings:
        """``[index]``."""
        return self.section("index", IndexSettings)

    @property
    def tokens(self) -> TokenSettings:
        """``[tokens]``."""
        return self.section("tokens", TokenSettings)

    @property
    def watch(self) -> WatchSettings:
        """``[watch]``."""
        return self.section("watch", WatchSettings)

    @property
    def masking(self) -> MaskingSettings:
        """``[masking]``."""
        return self.section("masking", MaskingSettings)

    @property
    def files(self) -> FileSettings:
        """``[files]``."""
        return self.section("files", FileSettings)

    @property
    def docs(self) -> DocSettings:
        """``[docs]``."""
        return self.section("docs", DocSettings)

    def unavailable(self, key: str, value: str, available: list[str]) -> InvalidInput:
        """The error for a value naming what no installed plugin registered, at its line."""
        return InvalidInput(
            f"config key '{key}' is {value!r}, which nothing installed provides "
            f"(available: {', '.join(sorted(available)) or 'none'})",
            path=CONFIG_PATH,
            line=self.lines.get(key),
            field=key,
            help=self.metadata(key).get("unavailable_help"),
        )

    def metadata(self, key: str) -> Mapping[str, Any]:
        """What :func:`setting` recorded for ``section.key`` (empty for an unknown key)."""
        section, _, attribute = key.partition(".")
        settings = self.sections.get(section)
        if settings is None:
            return {}
        field = attrs.fields_dict(type(settings)).get(attribute)
        found: Mapping[str, Any] = field.metadata if field is not None else {}
        return found
