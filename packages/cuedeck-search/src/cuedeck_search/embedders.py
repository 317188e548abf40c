"""The embedders cuedeck-search registers, and choosing a workspace's embedder.

``minilm`` is all-MiniLM-L6-v2 int8 (the default), computing in int8 where the CPU can;
``minilm-float`` is the same model computing in float32 everywhere (the vectors of
earlier versions); ``onnx`` is any sentence-transformers-style ONNX export a workspace's
``[search] onnx_*`` settings point at. Each is shared by every workspace of the process
with the same settings (a model costs a tenth of a second and tens of MB to load).
Plugins register others through ``register_embedders``.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck.layout import CONFIG_PATH
from cuedeck_search.settings import SearchSettings

if TYPE_CHECKING:
    from cuedeck.hookspecs import Embedder
    from cuedeck.workspace import Workspace
    from cuedeck_search.onnx_model import Arithmetic, OnnxEmbedder

_LOADED: dict[tuple[Any, ...], OnnxEmbedder] = {}
_LOADED_LOCK = threading.Lock()


def _verified_models() -> Any:
    from cuedeck_search import user_cache
    from cuedeck_search.onnx_model import VerifiedModels

    return VerifiedModels(user_cache.connect)


def minilm(workspace: Workspace, arithmetic: Arithmetic = "auto") -> OnnxEmbedder:
    """all-MiniLM-L6-v2 int8 (its sha256 checked once per file version), computing in
    int8 where the CPU can (see :func:`~cuedeck_search.onnx_model.model_file`)."""
    from cuedeck_search import user_cache
    from cuedeck_search.onnx_model import load_embedder, model_file

    model = model_file(arithmetic)
    key = ("minilm", str(model.path))
    with _LOADED_LOCK:
        embedder = _LOADED.get(key)
        if embedder is None:
            embedder = _LOADED[key] = load_embedder(user_cache.connect, model=model)
        return embedder


def minilm_float(workspace: Workspace) -> OnnxEmbedder:
    """all-MiniLM-L6-v2 int8 computing in float32 on every CPU (the published file)."""
    return minilm(workspace, "float")


def onnx_export(workspace: Workspace) -> OnnxEmbedder:
    """The export ``[search] onnx_dir`` names, pooled and normalised as configured.

    Its model id is ``onnx:`` plus the model file's sha256 (remembered per path, size and
    mtime) and the options that change vectors, so a different file or option never
    reuses another's vectors, and two clones pointing at the same model share theirs.
    """
    from cuedeck_search.onnx_model import OnnxEmbedder

    settings = workspace.config.section("search", SearchSettings)
    if not settings.onnx_dir:
        raise InvalidInput(
            'embedder = "onnx" needs [search] onnx_dir, the folder of the ONNX export',
            path=CONFIG_PATH,
            field="search.onnx_dir",
            help="point onnx_dir at a folder holding model.onnx and tokenizer.json",
        )
    folder = Path(settings.onnx_dir).expanduser()
    if not folder.is_absolute():
        folder = workspace.root / folder
    model = next(
        (p for p in (folder / "model.onnx", folder / "onnx/model.onnx") if p.is_file()), None
    )
    tokenizer = folder / "tokenizer.json"
    if model is None or not tokenizer.is_file():
        raise InvalidInput(
            f"{folder} is not an ONNX export: it needs model.onnx (or onnx/model.onnx) "
            "and tokenizer.json",
            path=CONFIG_PATH,
            field="search.onnx_dir",
            help="export the model with optimum (`optimum-cli export onnx --model NAME DIR`)",
        )
    options = (settings.onnx_pooling, settings.onnx_normalize, settings.onnx_max_tokens)
    stat = model.stat()
    key = ("onnx", str(model.resolve()), stat.st_size, stat.st_mtime_ns, *options)
    with _LOADED_LOCK:
        embedder = _LOADED.get(key)
        if embedder is None:
            sha = _verified_models().sha256(model.resolve())
            tokenizer_sha = hashlib.sha256(tokenizer.read_bytes()).hexdigest()
            pooling, normalize, max_tokens = options
            model_id = (
                f"onnx:{sha[:16]}:{tokenizer_sha[:8]}:{pooling}:"
                f"{'norm' if normalize else 'raw'}:{max_tokens}"
            )
            embedder = OnnxEmbedder(
                model,
                model_id=model_id,
                tokenizer_path=tokenizer,
                pooling=pooling,
                normalize=normalize,
                max_tokens=max_tokens,
            )
            _LOADED[key] = embedder
        return embedder


def workspace_embedder(workspace: Workspace) -> Embedder:
    """The embedder ``[search] embedder`` selects among the registered ones."""
    from cuedeck.hookspecs import Embedder
    from cuedeck.plugins.host import get_embedders

    config = workspace.config
    factories = get_embedders(workspace.plugins)
    name = config.section("search", SearchSettings).embedder
    factory = factories.get(name)
    if factory is None:
        raise config.unavailable("search.embedder", name, list(factories))
    embedder = factory(workspace)
    model_id = getattr(embedder, "model_id", None)
    if not isinstance(embedder, Embedder) or not isinstance(model_id, str) or not model_id:
        plugin = workspace.plugins.source_of("register_embedders", name)
        raise InvalidInput(
            f"embedder {name!r} of plugin {plugin!r} gave {embedder!r}, which has no "
            "model_id string or no embed(texts) method",
            field="search.embedder",
        )
    return embedder
