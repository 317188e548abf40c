"""``[search]``: the settings of cuedeck-search, registered through ``register_settings``."""

from __future__ import annotations

import attrs

from cuedeck.settings import setting

#: The engine's search modes (other plugins may register more through
#: ``register_searchers``; ``mode`` may name theirs).
MODES: tuple[str, ...] = ("keyword", "semantic", "hybrid")
#: The most results one search returns: the engine refuses more (1004), and ``limit``,
#: ``read_context``'s schema and ``cue search --limit`` stop here too.
MAX_LIMIT = 100


@attrs.frozen
class SearchSettings:
    """``[search]``: defaults of ``cue search``, ``read_context`` and
    ``Workspace.search``, and the engine behind them."""

    mode: str = setting(
        "hybrid",
        "Default search mode of cue search, read_context and Workspace.search: keyword, "
        "semantic, hybrid or a mode another plugin registers.",
        names="register_searchers",
        unavailable_help="use keyword, semantic or hybrid, or a mode a plugin registers "
        "(`cue plugins`)",
    )
    fusion: str = setting(
        "weighted",
        "How hybrid fuses the two rankings: weighted (semantic_weight and keyword_weight on "
        "scores scaled to [0, 1]; level with or above rrf on every set measured, including "
        "a held-out one, benchmarks/README.md) or rrf (reciprocal rank fusion).",
        ("rrf", "weighted"),
    )
    semantic_weight: float = setting(
        0.7, "Weight of the semantic score in weighted fusion.", minimum=0
    )
    keyword_weight: float = setting(
        0.3, "Weight of the keyword score in weighted fusion.", minimum=0
    )
    rrf_k: int = setting(60, "The k constant of reciprocal rank fusion.", minimum=1)
    history_commits: int = setting(
        1000,
        "In a git repository: how many of HEAD's last commits (merges left out) lend their "
        "titles to the code files they modified, as keyword evidence (docs/search.md, "
        '"Ranking code"); 0 = none.',
        minimum=0,
    )
    limit: int = setting(
        5, "Default number of results (at most 100).", minimum=1, maximum=MAX_LIMIT
    )
    wait: bool = setting(
        False,
        "Semantic and hybrid searches first embed every section not yet embedded (true), "
        "or answer at once from the vectors there are, with `semantic_coverage`, while the "
        "rest is embedded in the background (false). `cue search --wait` asks once.",
    )
    embedding_cache_mb: int = setting(
        256,
        "Size cap of the embedding cache in the user cache directory, shared by every "
        "workspace, in MB (about 1.7 KB a MiniLM vector; least recently used vectors go "
        "first; 0 = no cap). `cue clean --all` empties it.",
        minimum=0,
    )
    embedder: str = setting(
        "minilm",
        "Registered embedder behind semantic search: `minilm` (all-MiniLM-L6-v2 int8, "
        "computing in int8 where the CPU has VNNI), `minilm-float` (the same model computing "
        "in float everywhere), `onnx` (the export in `onnx_dir`) or one a plugin registers "
        "(`cue plugins`). docs/search.md.",
        unavailable_help='use "minilm", "onnx" with onnx_dir, or an embedder a plugin '
        "registers (`cue plugins`)",
    )
    onnx_dir: str = setting(
        "",
        'With `embedder = "onnx"`: folder of a sentence-transformers-style ONNX export '
        "(`model.onnx` or `onnx/model.onnx`, and `tokenizer.json`); relative to the "
        "workspace root, or absolute.",
    )
    onnx_pooling: str = setting(
        "mean",
        'With `embedder = "onnx"`: `mean` (average of the token vectors under the attention '
        "mask) or `cls` (the first token's vector); use what the model was trained with.",
        ("mean", "cls"),
    )
    onnx_normalize: bool = setting(
        True,
        'With `embedder = "onnx"`: scale vectors to unit length (cosine similarity); turn '
        "off only for a model whose export normalises already.",
    )
    onnx_max_tokens: int = setting(
        256,
        'With `embedder = "onnx"`: word pieces kept per text (the rest is cut).',
        minimum=8,
    )
