"""The embedding cache in the user cache directory, shared by every workspace.

Vectors are keyed by the model id and the sha256 of the text the model saw, so ``cue
clean``, a second clone or another branch of the same repository embeds nothing that was
embedded before, and a vector of one model is never handed to another. The file is
``embeddings.sqlite3`` under :func:`cuedeck.layout.user_cache_dir` (``$CUEDECK_CACHE_DIR``
or the platform's user cache folder); ``cue clean --all`` removes it.

Several processes share it: WAL journal, a busy timeout, every write one ``BEGIN
IMMEDIATE`` transaction (a batch is stored whole or not at all), and LRU eviction past
``[search] embedding_cache_mb``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck.layout import user_cache_dir
from cuedeck.system.databases import open_db
from cuedeck_search.onnx_model import DIMENSIONS

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from numpy.typing import NDArray

DATABASE = "embeddings.sqlite3"
#: Bytes a row costs beyond its vector (keys, ``used``, b-tree overhead), roughly.
ROW_OVERHEAD = 120


def database_path() -> Path:
    """Where the shared embedding cache lives."""
    return Path(user_cache_dir()) / DATABASE


def connect() -> sqlite3.Connection:
    """A connection to the shared cache (created on first use), in autocommit mode."""
    return open_db(database_path())


_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    chunk_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    used INTEGER NOT NULL,
    UNIQUE (chunk_hash, model)
);
CREATE INDEX IF NOT EXISTS embeddings_used ON embeddings (used);
CREATE TABLE IF NOT EXISTS embedding_rates (model TEXT PRIMARY KEY, per_second REAL NOT NULL);
"""
#: Sections per second assumed before a model was ever timed on this machine (the int8
#: model embeds about 160 a second on two cores, the float one about 70): low on purpose.
DEFAULT_RATE = 40.0


class EmbeddingCache:
    """Vectors of one model by chunk hash, in the shared SQLite file, size-capped.

    ``used`` (unix seconds) is refreshed when a vector is loaded, at most hourly; past
    the cap, the least recently used rows go first, whatever their model. Each call
    opens its own connection, so the cache can be used from any thread.
    """

    ROW_BYTES = DIMENSIONS * 4 + ROW_OVERHEAD  # a MiniLM row (docs quote the cap in these)

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self._ready = False

    @contextlib.contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        connection = connect()
        try:
            if not self._ready:
                connection.executescript(_SCHEMA)
                self._ready = True
            yield connection
        finally:
            connection.close()

    def load(self, hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Cached vectors of this model among ``hashes``."""
        found: dict[str, NDArray[np.float32]] = {}
        stale: list[str] = []
        now = int(time.time())
        unique = list(dict.fromkeys(hashes))
        with self._open() as connection:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT chunk_hash, vector, used FROM embeddings "
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
                    _transaction(
                        connection,
                        "UPDATE embeddings SET used = ? WHERE chunk_hash = ? AND model = ?",
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
            _transaction(connection, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def rate(self) -> float:
        """Sections per second this model last embedded on this machine (a guess before)."""
        try:
            with self._open() as connection:
                row = connection.execute(
                    "SELECT per_second FROM embedding_rates WHERE model = ?", (self.model_id,)
                ).fetchone()
        except sqlite3.Error:
            return DEFAULT_RATE
        return float(row[0]) if row else DEFAULT_RATE

    def record_rate(self, per_second: float) -> None:
        """Remember how fast this model embedded (estimates of the next runs use it)."""
        with contextlib.suppress(sqlite3.Error), self._open() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO embedding_rates VALUES (?, ?)", (self.model_id, per_second)
            )

    def count(self, *, every_model: bool = True) -> int:
        """Rows in the cache (of every model, or of this one)."""
        with self._open() as connection:
            if every_model:
                row = connection.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = connection.execute(
                    "SELECT COUNT(*) FROM embeddings WHERE model = ?", (self.model_id,)
                ).fetchone()
            return int(row[0])

    def enforce_cap(self, cap_mb: float, keep: set[str] | frozenset[str] = frozenset()) -> int:
        """Evict least recently used rows until the cache is within ``cap_mb``; rows of
        this model in ``keep`` stay. How many rows went."""
        cap = int(cap_mb * 1024 * 1024)
        with self._open() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                total = connection.execute(
                    "SELECT COALESCE(SUM(LENGTH(vector)), 0) + COUNT(*) * ? FROM embeddings",
                    (ROW_OVERHEAD,),
                ).fetchone()[0]
                victims: list[tuple[str, str]] = []
                if total > cap:
                    rows = connection.execute(
                        "SELECT chunk_hash, model, LENGTH(vector) FROM embeddings ORDER BY used"
                    ).fetchall()
                    for chunk_hash, model, size in rows:
                        if total <= cap:
                            break
                        if model == self.model_id and chunk_hash in keep:
                            continue
                        victims.append((chunk_hash, model))
                        total -= size + ROW_OVERHEAD
                    connection.executemany(
                        "DELETE FROM embeddings WHERE chunk_hash = ? AND model = ?", victims
                    )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return len(victims)


def _transaction(connection: sqlite3.Connection, sql: str, rows: Sequence[Any]) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(sql, rows)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
