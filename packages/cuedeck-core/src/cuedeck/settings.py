"""Every setting of ``.cuedeck/config.toml``: its section, type, default and meaning.

The schema only; :mod:`cuedeck.config` loads a workspace's file and environment into it.
docs/config.md is generated from the ``doc`` metadata here, and a test keeps them equal.
"""

from __future__ import annotations

from typing import Any

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.layout import CONFIG_PATH, SCENE_PATH
from cuedeck.models import Problem  # noqa: TC001 (config evaluates these annotations)


def _setting(
    default: Any,
    doc: str,
    choices: tuple[str, ...] = (),
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    if isinstance(default, list | dict):
        value = default
        return attrs.field(factory=lambda: type(value)(value), metadata={"doc": doc})
    metadata = {"doc": doc, "choices": choices, "minimum": minimum, "maximum": maximum}
    return attrs.field(default=default, metadata=metadata)


@attrs.frozen
class SceneSettings:
    """``[scene]``: how ``cue scene`` packs the active card and its references."""

    token_limit: int = _setting(32000, "Token budget of a scene.", minimum=1)
    pruner: str = _setting("outline", "Registered pruner that fits documents to the budget.")
    global_docs: list[str] = _setting(
        [],
        "Docs (`path` or `path#heading`) added to every scene at priority 10 (TOML key `global`).",
    )
    format: str = _setting("markdown", "Default output format.", ("markdown", "xml", "json"))
    output: str = _setting(SCENE_PATH, "Where `cue scene` writes the scene.")
    clipboard: bool = _setting(True, "Copy the scene to the clipboard after writing it.")
    link_depth: int = _setting(
        1,
        'Hops of plain markdown and wiki links ("see also") a scene follows from what it '
        "includes, at priority 20; 0 follows none.",
        minimum=0,
    )
    memory: bool = _setting(
        True,
        "Add the active card's pinned memory segments and decisions (cuedeck-memory) at "
        "priority 40, between direct and indirect references.",
    )
    code_share: float = _setting(
        0.25,
        'Most of the budget "related code" may take: the definitions the code ranker finds '
        "for the card, whole while they fit, then as signatures (0 adds none).",
        minimum=0.0,
        maximum=1.0,
    )
    code_ranker: str = _setting(
        "importance",
        "Registered code ranker behind related code and `cue map` (cuedeck-code: importance).",
    )


@attrs.frozen
class IndexSettings:
    """``[index]``: which files the index reads."""

    include: list[str] = _setting(
        ["**/*"],
        "Globs (gitignore syntax) of the files to index, each read by the parser that claims "
        'it: markdown, and code with cuedeck-code (`["**/*.md"]`: markdown only).',
    )
    exclude: list[str] = _setting(
        ["node_modules/", ".venv/", "venv/", ".tox/", "site-packages/", "dist/", "build/"],
        "Globs never indexed, on top of .gitignore.",
    )
    gitignore: bool = _setting(True, "Honour .gitignore files.")
    max_file_mb: float = _setting(64.0, "Larger files are skipped with a warning.", minimum=0.001)


# --- [code]: cuedeck-code's settings ------------------------------------------------------
# Kept here, apart from core's own, until plugins declare their sections themselves
# (register_settings); then this class moves into cuedeck-code unchanged.


@attrs.frozen
class CodeSettings:
    """``[code]``: which source files cuedeck-code indexes (on top of ``[index]``)."""

    enabled: bool = _setting(True, "Index source files (false: markdown only).")
    languages: list[str] = _setting(
        [],
        "Languages to index (python, javascript, typescript, tsx, go, rust, java, c, cpp, "
        "ruby); empty: all of them.",
    )
    git_tracked: bool = _setting(
        True,
        "In a git repository, index only the source files git tracks (outside one, what "
        ".gitignore allows).",
    )
    exclude: list[str] = _setting(
        [
            "vendor/",
            "vendored/",
            "third_party/",
            "third-party/",
            "thirdparty/",
            "external/",
            "node_modules/",
            "bower_components/",
            "Pods/",
            "*.min.js",
            "*.min.mjs",
            "*.bundle.js",
            "*_pb2.py",
            "*_pb2_grpc.py",
            "*_pb2.pyi",
            "*.pb.go",
            "*.pb.cc",
            "*.pb.h",
            "*.generated.*",
            "*_generated.*",
        ],
        "Globs (gitignore syntax) of vendored and generated source files never indexed.",
    )
    max_file_kb: int = _setting(1024, "Source files larger than this are not indexed.", minimum=1)
    skip_generated: bool = _setting(
        True,
        "Leave out files that say they are generated in their first lines (`Code generated "
        "... DO NOT EDIT`, `@generated`, `auto-generated`).",
    )
    max_average_line: int = _setting(
        200,
        "Leave out files whose lines average more characters than this (minified); 0 keeps them.",
        minimum=0,
    )


@attrs.frozen
class TokenSettings:
    """``[tokens]``: how tokens are counted."""

    counter: str = _setting(
        "auto", "Registered token counter; `auto` is o200k when installed, else the estimate."
    )


@attrs.frozen
class SearchSettings:
    """``[search]``: defaults of ``cue search`` and ``read_context``."""

    mode: str = _setting("hybrid", "Default searcher: keyword, semantic or hybrid.")
    fusion: str = _setting(
        "rrf",
        "How hybrid fuses the two rankings: rrf (reciprocal rank fusion; best nDCG@10 on the "
        "labelled queries, docs/search.md) or weighted (semantic_weight and keyword_weight "
        "on scores scaled to [0, 1]).",
        ("rrf", "weighted"),
    )
    semantic_weight: float = _setting(
        0.7, "Weight of the semantic score in weighted fusion.", minimum=0
    )
    keyword_weight: float = _setting(
        0.3, "Weight of the keyword score in weighted fusion.", minimum=0
    )
    rrf_k: int = _setting(60, "The k constant of reciprocal rank fusion.", minimum=1)
    limit: int = _setting(5, "Default number of results.", minimum=1, maximum=100)
    wait: bool = _setting(
        False,
        "Semantic and hybrid searches first embed every section not yet embedded (true), "
        "or answer at once from the vectors there are, with semantic_coverage, while the "
        "rest is embedded in the background (false).",
    )
    embedding_cache_mb: int = _setting(
        256,
        "Size cap of the embedding cache in the user cache directory, shared by every "
        "workspace, in MB (about 1.7 KB a MiniLM vector; least recently used vectors go "
        "first; 0 = no cap).",
        minimum=0,
    )
    embedder: str = _setting(
        "minilm",
        "Registered embedder behind semantic search: minilm (all-MiniLM-L6-v2 int8), onnx "
        "(the export in onnx_dir) or one a plugin registers (`cue plugins`).",
    )
    onnx_dir: str = _setting(
        "",
        "With embedder = onnx: folder of a sentence-transformers-style ONNX export "
        "(model.onnx, or onnx/model.onnx, and tokenizer.json); relative to the workspace "
        "root, or absolute.",
    )
    onnx_pooling: str = _setting(
        "mean",
        "With embedder = onnx: mean (average of the token vectors under the attention "
        "mask) or cls (the first token's vector); use what the model was trained with.",
        ("mean", "cls"),
    )
    onnx_normalize: bool = _setting(
        True,
        "With embedder = onnx: scale vectors to unit length (cosine similarity); turn off "
        "only for a model whose export normalises already.",
    )
    onnx_max_tokens: int = _setting(
        256, "With embedder = onnx: word pieces kept per text (the rest is cut).", minimum=8
    )


@attrs.frozen
class WatchSettings:
    """``[watch]``: ``cue watch``."""

    debounce_ms: int = _setting(500, "Changes within this window produce one rebuild.", minimum=0)


@attrs.frozen
class MaskingSettings:
    """``[masking]``: secret masking of everything that leaves the process."""

    enabled: bool = _setting(True, "Mask secrets in scenes, search snippets and tool replies.")
    disabled_rules: list[str] = _setting([], "Names of built-in rules to switch off.")
    allow_paths: list[str] = _setting([], "Globs of files whose content is never masked.")
    allow_values: list[str] = _setting([], "Exact values that are never masked.")
    patterns: dict[str, str] = _setting(
        {}, "Extra rules: name = regular expression (the whole match is masked)."
    )


@attrs.frozen
class McpSettings:
    """``[mcp]``: the MCP server."""

    host: str = _setting("127.0.0.1", "HTTP transport host (loopback by default).")
    port: int = _setting(8765, "HTTP transport port.", minimum=1, maximum=65535)
    read_doc_max_tokens: int = _setting(
        5000, "Default page size of read_doc, in tokens.", minimum=1
    )
    allowed_hosts: list[str] = _setting(
        [],
        "Extra `Host` header values the HTTP transport accepts (`name` or `name:port`), "
        "beyond the bound address and loopback names.",
    )
    allowed_origins: list[str] = _setting(
        [],
        "Browser origins (`scheme://host:port`) allowed to call the HTTP transport, beyond "
        "the server's own.",
    )
    local_role: str = _setting(
        "write",
        "Role of clients without a token: stdio, and HTTP on loopback when no token is "
        "configured. Destructive tools need `admin` (and still their confirmation token).",
        ("read", "write", "admin"),
    )
    tools: list[str] = _setting(
        ["core"],
        "Tools served: `core` (every tool but the files and git ones, and of memory only "
        "context_capture, context_restore and context_analyze_usage), `all`, categories "
        "(`files`, `git`, `memory`...) and/or tool names, as a list or one "
        'comma-separated string, e.g. `["core", "memory", "get_file_content"]` or `"core,git"`.',
    )


@attrs.frozen
class FileSettings:
    """``[files]``: the file tools (get_file_content, create_file, edit_file, delete_file)."""

    deny: list[str] = _setting(
        [".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*"],
        "Globs (gitignore syntax) of files the file tools never read or write.",
    )
    max_tokens: int = _setting(5000, "Default page size of get_file_content, in tokens.", minimum=1)


@attrs.frozen
class GitSettings:
    """``[git]``: the git tools of cuedeck-git."""

    timeout: float = _setting(
        30.0, "Seconds a local git command may run before it is stopped.", minimum=1
    )
    network_timeout: float = _setting(
        120.0, "Seconds git_push, git_pull and git_fetch may run.", minimum=1
    )


@attrs.frozen
class TaskSettings:
    """``[tasks]``: task cards."""

    default_priority: str = _setting(
        "medium", "Priority of new cards.", ("low", "medium", "high", "critical")
    )


@attrs.frozen
class MemorySettings:
    """``[memory]``: context memory (cuedeck-memory): segments, usage, GC and stash."""

    token_limit: int = _setting(
        200000, "Context window that usage and health are measured against.", minimum=1
    )
    recency_window: int = _setting(
        20,
        "The current task's latest messages and decisions that are GC roots (never pruned).",
        minimum=0,
    )
    half_life_hours: float = _setting(
        24.0, "Age at which a segment's age factor in the GC score reaches 0.5.", minimum=0.01
    )
    mask_on_capture: bool = _setting(
        True, "Mask secrets in segments before they are written to disk."
    )
    max_tokens: int = _setting(
        8000,
        "Default reply budget of the memory tools, in tokens; longer replies page.",
        minimum=100,
    )
    search_mode: str = _setting(
        "keyword",
        "How stash queries are ranked: keyword (always), or semantic or hybrid through the "
        "workspace's searchers when cuedeck-search is installed.",
    )


@attrs.frozen
class RateLimit:
    """A token bucket: ``per_minute`` refill rate and ``burst`` capacity."""

    per_minute: int
    burst: int


DEFAULT_RATE_LIMITS: dict[str, RateLimit] = {
    "read_context": RateLimit(10, 15),
    "read_doc": RateLimit(30, 50),
    "list_tasks": RateLimit(20, 30),
    "update_task": RateLimit(10, 15),
}


@attrs.frozen
class Config:
    """All settings of a workspace, plus the warnings met while loading them."""

    scene: SceneSettings = attrs.field(factory=SceneSettings)
    index: IndexSettings = attrs.field(factory=IndexSettings)
    tokens: TokenSettings = attrs.field(factory=TokenSettings)
    search: SearchSettings = attrs.field(factory=SearchSettings)
    watch: WatchSettings = attrs.field(factory=WatchSettings)
    masking: MaskingSettings = attrs.field(factory=MaskingSettings)
    mcp: McpSettings = attrs.field(factory=McpSettings)
    tasks: TaskSettings = attrs.field(factory=TaskSettings)
    files: FileSettings = attrs.field(factory=FileSettings)
    git: GitSettings = attrs.field(factory=GitSettings)
    memory: MemorySettings = attrs.field(factory=MemorySettings)
    code: CodeSettings = attrs.field(factory=CodeSettings)
    rate_limits: dict[str, RateLimit] = attrs.field(factory=lambda: dict(DEFAULT_RATE_LIMITS))
    warnings: tuple[Problem, ...] = ()
    #: ``section.key`` -> its line in config.toml, to point at a value found wrong later.
    lines: dict[str, int] = attrs.field(factory=dict, eq=False)

    def unavailable(self, key: str, value: str, available: list[str]) -> InvalidInput:
        """The error for a value naming what no installed plugin registered, at its line."""
        return InvalidInput(
            f"config key '{key}' is {value!r}, which nothing installed provides "
            f"(available: {', '.join(sorted(available)) or 'none'})",
            path=CONFIG_PATH,
            line=self.lines.get(key),
            field=key,
            help=NAMED_VALUE_HELP.get(key),
        )


#: Keys whose value names something a plugin registers, and what to do when it is missing.
NAMED_VALUE_HELP = {
    "scene.code_ranker": 'install cuedeck-code for "importance", or pick a registered code ranker '
    "(`cue plugins`)",
    "scene.pruner": "pick a registered pruner (`cue plugins` lists them; built in: greedy, "
    "outline)",
    "search.embedder": 'use "minilm", "onnx" with onnx_dir, or an embedder a plugin registers '
    "(`cue plugins`)",
    "search.mode": "use keyword, semantic or hybrid, or a mode a plugin registers (`cue plugins`)",
    "tokens.counter": 'set counter = "auto", or install the counter (`cue plugins` lists '
    "what is there; docs/tokens.md)",
}


#: TOML section name -> settings class (``rate_limits`` is handled on its own).
SECTIONS: dict[str, type] = {
    "scene": SceneSettings,
    "index": IndexSettings,
    "tokens": TokenSettings,
    "search": SearchSettings,
    "watch": WatchSettings,
    "masking": MaskingSettings,
    "mcp": McpSettings,
    "tasks": TaskSettings,
    "files": FileSettings,
    "git": GitSettings,
    "memory": MemorySettings,
    "code": CodeSettings,
}
