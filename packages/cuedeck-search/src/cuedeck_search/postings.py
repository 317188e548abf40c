"""Postings: the keyword index as flat arrays, built in memory or mapped from the cache.

A :class:`Postings` holds the sections of some documents: for each term (sorted), the
sections holding it and its weighted frequency there; for each section, its weighted
length, its document and the hash of its embedding text. BM25F is computed from these
inputs at query time (see :mod:`cuedeck_search.keyword`), so postings of unchanged
documents plus small postings of changed ones score exactly like postings rebuilt whole.

Saved as one file (a JSON header, then the arrays at aligned offsets) that readers map
into memory: a query process touches the header, the few terms it looks up and their
sections, whatever the workspace's size. It is written to a temporary file and renamed,
so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import mmap
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import numpy as np

from cuedeck.writes import atomic_write
from cuedeck_search.bm25 import FORMAT, MAGIC, aligned

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from numpy.typing import NDArray


@attrs.frozen
class DocumentTerms:
    """The terms of one document's sections: its own vocabulary, then flat arrays.

    Row ``i`` (section ``i``) owns ``row_sizes[i]`` consecutive entries of ``local``
    (indexes into ``vocabulary``) and ``frequencies``; ``lengths`` are the weighted
    section lengths.
    """

    vocabulary: tuple[str, ...]
    local: NDArray[np.int32]
    frequencies: NDArray[np.float32]
    row_sizes: NDArray[np.int32]
    lengths: NDArray[np.float32]


_MAGIC = MAGIC

Key = tuple[str, str]  # (path, sha256)


class SectionRef(Protocol):
    """What postings keep of a section besides its terms."""

    @property
    def hash(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


class PostingsError(ValueError):
    """A saved postings file that cannot be used (damaged, truncated, or another build)."""


class Terms:
    """A sorted vocabulary: UTF-8 terms end to end in ``blob``, ``offsets`` bounding each."""

    def __init__(self, blob: NDArray[np.uint8], offsets: NDArray[np.int64]) -> None:
        self.blob = blob
        self.offsets = offsets

    def __len__(self) -> int:
        return max(len(self.offsets) - 1, 0)

    def word(self, index: int) -> bytes:
        """The UTF-8 bytes of term ``index``."""
        return bytes(self.blob[int(self.offsets[index]) : int(self.offsets[index + 1])])

    def find(self, term: str) -> int:
        """The column of ``term``, or -1 (a binary search: few pages of a mapped file)."""
        key = term.encode("utf-8")
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self.word(middle) < key:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self) and self.word(low) == key else -1

    def words(self) -> list[bytes]:
        """Every term, in order."""
        data = bytes(self.blob)
        bounds = self.offsets.tolist()
        return list(map(data.__getitem__, map(slice, bounds[:-1], bounds[1:])))

    @classmethod
    def of(cls, words: Sequence[bytes]) -> Terms:
        """The table of ``words`` (already sorted)."""
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, words), np.int64, len(words)), out=offsets[1:])
        blob = np.frombuffer(b"".join(words), dtype=np.uint8)
        return cls(blob, offsets)


@attrs.frozen
class Postings:
    """The keyword postings and section table of ``keys`` (see the module docstring).

    Sections are numbered document by document: those of document ``d`` run from
    ``doc_ends[d - 1]`` (0 for the first) to ``doc_ends[d]``. Term ``t``'s postings are
    ``rows[indptr[t]:indptr[t + 1]]`` (ascending) with frequencies ``tf`` alongside.
    """

    keys: tuple[Key, ...]
    doc_ends: NDArray[np.int64]
    lengths: NDArray[np.float32]
    lines: NDArray[np.int32]  # (sections, 2): first and last line of each section
    hashes: NDArray[np.uint8]  # (sections, 32): sha256 of each embedding text
    terms: Terms
    indptr: NDArray[np.int64]
    rows: NDArray[np.int32]
    tf: NDArray[np.float32]

    @property
    def sections(self) -> int:
        """How many sections there are."""
        return len(self.lengths)

    @property
    def total_length(self) -> float:
        """The sum of the sections' weighted lengths (float64, as the scorers sum it)."""
        return float(self.lengths.sum(dtype=np.float64))

    def column(self, term: str) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """The sections holding ``term`` and its weighted frequency in each."""
        found = self.terms.find(term)
        if found < 0:
            return _NO_ROWS, _NO_TF
        start, end = int(self.indptr[found]), int(self.indptr[found + 1])
        rows = self.rows[start:end]
        if not 0 <= start <= end <= len(self.rows) or (len(rows) and rows[-1] >= self.sections):
            raise PostingsError(f"postings of {term!r} point outside the sections")
        return rows, self.tf[start:end]


_NO_ROWS: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
_NO_TF: NDArray[np.float32] = np.zeros(0, dtype=np.float32)


def empty() -> Postings:
    """Postings of no document."""
    return build([])


def build(documents: Iterable[tuple[Key, DocumentTerms, Sequence[SectionRef]]]) -> Postings:
    """Postings of ``(key, terms, sections)`` per document, in that order."""
    vocabulary: dict[str, int] = {}
    keys: list[Key] = []
    ids: list[NDArray[np.int32]] = []
    tfs: list[NDArray[np.float32]] = []
    sizes: list[NDArray[np.int32]] = []
    lengths: list[NDArray[np.float32]] = []
    hashes: list[str] = []
    lines: list[tuple[int, int]] = []
    for key, terms, sections in documents:
        mapping = np.fromiter(
            (vocabulary.setdefault(t, len(vocabulary)) for t in terms.vocabulary),
            dtype=np.int32,
            count=len(terms.vocabulary),
        )
        keys.append(key)
        ids.append(mapping[terms.local] if len(terms.local) else terms.local)
        tfs.append(terms.frequencies)
        sizes.append(terms.row_sizes)
        lengths.append(terms.lengths)
        hashes.extend(s.hash for s in sections)
        lines.extend((s.line, s.end_line) for s in sections)
    row_sizes = _concat(sizes, np.int32)
    per_doc = np.asarray([len(s) for s in sizes], dtype=np.int64)
    words = [w.encode("utf-8") for w in vocabulary]
    rank = np.empty(len(words), dtype=np.int32)
    order = sorted(range(len(words)), key=words.__getitem__)
    rank[order] = np.arange(len(words), dtype=np.int32)
    columns = rank[_concat(ids, np.int32)] if words else _NO_ROWS
    rows = np.repeat(np.arange(len(row_sizes), dtype=np.int32), row_sizes)
    return assemble(
        tuple(keys),
        np.cumsum(per_doc, dtype=np.int64),
        _concat(lengths, np.float32),
        np.asarray(lines, dtype=np.int32).reshape(-1, 2),
        hash_array(hashes),
        [words[i] for i in order],
        columns,
        rows,
        _concat(tfs, np.float32),
    )


def merge(base: Postings, dead: NDArray[np.bool_], extra: Postings) -> Postings:
    """``base`` without its ``dead`` documents, followed by ``extra``, as one postings."""
    return combine([(base, ~dead), (extra, None)])


def combine(parts: Sequence[tuple[Postings, NDArray[np.bool_] | None]]) -> Postings:
    """The documents of each part that its mask keeps (all of them for None), part after
    part, as one postings: sections renumbered, vocabularies joined."""
    words_of = [part.terms.words() for part, _ in parts]
    # Each part's words are sorted: sorting them together merges sorted runs.
    union = list(dict.fromkeys(sorted(chain.from_iterable(words_of))))
    position = dict(zip(union, range(len(union)), strict=True))
    keys: list[Key] = []
    columns: list[NDArray[np.int32]] = []
    rows: list[NDArray[np.int32]] = []
    tfs: list[NDArray[np.float32]] = []
    ends: list[NDArray[np.int64]] = []
    lengths: list[NDArray[np.float32]] = []
    lines: list[NDArray[np.int32]] = []
    hashes: list[NDArray[np.uint8]] = []
    kept = 0  # sections taken from the parts before
    for (part, live), words in zip(parts, words_of, strict=True):
        live_docs = np.ones(len(part.keys), dtype=bool) if live is None else live
        sizes = np.diff(part.doc_ends, prepend=0)
        live_sections = np.repeat(live_docs, sizes)
        renumber = np.cumsum(live_sections, dtype=np.int64) - 1 + kept
        word_map = np.fromiter(map(position.__getitem__, words), np.int32, len(words))
        part_columns = np.repeat(np.arange(len(words), dtype=np.int32), np.diff(part.indptr))
        keep = live_sections[part.rows] if len(part.rows) else np.zeros(0, dtype=bool)
        columns.append(word_map[part_columns[keep]])
        rows.append(renumber[part.rows[keep]].astype(np.int32))
        tfs.append(part.tf[keep])
        keys.extend(k for k, alive in zip(part.keys, live_docs.tolist(), strict=True) if alive)
        ends.append(kept + np.cumsum(sizes[live_docs], dtype=np.int64))
        lengths.append(part.lengths[live_sections])
        lines.append(part.lines[live_sections])
        hashes.append(part.hashes[live_sections])
        kept += int(live_sections.sum())
    column = _concat(columns, np.int32)
    # Terms whose every section went away are dropped, so a long-lived index stays small.
    used = np.bincount(column, minlength=len(union)) > 0
    if not used.all():
        shift = np.cumsum(used, dtype=np.int32) - 1
        column = shift[column]
        union = [w for w, u in zip(union, used.tolist(), strict=True) if u]
    return assemble(
        tuple(keys),
        _concat(ends, np.int64),
        _concat(lengths, np.float32),
        np.concatenate(lines).reshape(-1, 2) if lines else np.zeros((0, 2), np.int32),
        np.concatenate(hashes).reshape(-1, 32) if hashes else np.zeros((0, 32), np.uint8),
        union,
        column,
        _concat(rows, np.int32),
        _concat(tfs, np.float32),
    )


def assemble(
    keys: tuple[Key, ...],
    doc_ends: NDArray[np.int64],
    lengths: NDArray[np.float32],
    lines: NDArray[np.int32],
    hashes: NDArray[np.uint8],
    words: Sequence[bytes],
    columns: NDArray[np.int32],
    rows: NDArray[np.int32],
    tf: NDArray[np.float32],
    *,
    ordered: bool = False,
) -> Postings:
    """Sort (column, row, tf) triples by column, then row, into column-major postings
    (``ordered``: they are in that order already)."""
    indptr = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.bincount(columns, minlength=len(words)), out=indptr[1:])
    if not ordered:
        order = stable_order(columns.astype(np.int64) * max(len(lengths), 1) + rows)
        rows, tf = rows[order], tf[order]
    return Postings(
        keys=keys,
        doc_ends=np.asarray(doc_ends, dtype=np.int64),
        lengths=np.asarray(lengths, dtype=np.float32),
        lines=np.asarray(lines, dtype=np.int32).reshape(-1, 2),
        hashes=np.asarray(hashes, dtype=np.uint8).reshape(-1, 32),
        terms=Terms.of(words),
        indptr=indptr,
        rows=np.ascontiguousarray(rows, dtype=np.int32),
        tf=np.ascontiguousarray(tf, dtype=np.float32),
    )


def stable_order(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """The order that sorts ``keys`` (not negative), equal keys kept in input order."""
    size = len(keys)
    bits = max(size.bit_length(), 1)
    if int(keys.max(initial=0)).bit_length() + bits > 62:
        return np.argsort(keys, kind="stable")
    # A plain sort of each key with its position below it: several times faster than an
    # argsort, and stable, as the position breaks ties.
    packed = np.sort((keys << bits) | np.arange(size, dtype=np.int64))
    order: NDArray[np.int64] = packed & ((1 << bits) - 1)
    return order


def _concat(parts: Sequence[NDArray[Any]], dtype: type[Any]) -> NDArray[Any]:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def hash_array(hexes: Sequence[str]) -> NDArray[np.uint8]:
    """The ``(n, 32)`` array of sha256 hex digests."""
    data = bytes.fromhex("".join(hexes))
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, 32)


def hex_hashes(hashes: NDArray[np.uint8]) -> list[str]:
    """The sha256 hex digests of a ``(n, 32)`` hash array."""
    data = np.ascontiguousarray(hashes).tobytes()
    return [data[i : i + 32].hex() for i in range(0, len(data), 32)]


# -- the file ------------------------------------------------------------------------------

_ARRAYS = ("doc_ends", "lengths", "lines", "hashes", "blob", "offsets", "indptr", "rows", "tf")


def save(postings: Postings, path: Path, fingerprint: str, *, code_documents: int = 0) -> None:
    """Write ``postings`` to ``path`` atomically (:func:`cuedeck.writes.atomic_write`);
    the header says how many of its documents are code (the quick path of ``cue
    search`` leaves workspaces with code to the engine)."""
    arrays: dict[str, NDArray[Any]] = {
        "doc_ends": postings.doc_ends,
        "lengths": postings.lengths,
        "lines": postings.lines,
        "hashes": postings.hashes,
        "blob": postings.terms.blob,
        "offsets": postings.terms.offsets,
        "indptr": postings.indptr,
        "rows": postings.rows,
        "tf": postings.tf,
    }
    # Paths NUL-separated (no path holds a NUL), then the fixed-width hex digests.
    paths = "\0".join(p for p, _ in postings.keys)
    keys = f"{paths}\0\0{''.join(s for _, s in postings.keys)}".encode()
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name in _ARRAYS:
        array = np.ascontiguousarray(arrays[name])
        layout[name] = [array.dtype.str, list(array.shape), offset]
        offset = aligned(offset + array.nbytes)
    layout["keys"] = ["|u1", [len(keys)], offset]
    header = json.dumps(
        {
            "format": FORMAT,
            "fingerprint": fingerprint,
            "arrays": layout,
            "code_documents": code_documents,
            "total_length": postings.total_length,
        },
        sort_keys=True,
    ).encode()
    start = aligned(len(_MAGIC) + 8 + len(header))
    payload = bytearray(start + layout["keys"][2] + len(keys))
    payload[: len(_MAGIC) + 8 + len(header)] = _MAGIC + len(header).to_bytes(8, "little") + header
    for name in _ARRAYS:
        data = np.ascontiguousarray(arrays[name]).tobytes()
        payload[start + layout[name][2] : start + layout[name][2] + len(data)] = data
    payload[start + layout["keys"][2] :] = keys
    atomic_write(path, bytes(payload))


def load(path: Path, fingerprint: str) -> Postings:
    """The postings saved at ``path``, mapped read-only; :class:`PostingsError` when the
    file is damaged or was built with other settings (the caller rebuilds it)."""
    try:
        with path.open("rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
        raise PostingsError(f"cannot map {path}: {exc}") from None
    try:
        return _parse(mapped, fingerprint)
    except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise PostingsError(f"{path} is damaged: {exc}") from None


def _parse(mapped: mmap.mmap, fingerprint: str) -> Postings:
    if mapped[: len(_MAGIC)] != _MAGIC:
        raise PostingsError("not a postings file")
    size = int.from_bytes(mapped[len(_MAGIC) : len(_MAGIC) + 8], "little")
    header = json.loads(mapped[len(_MAGIC) + 8 : len(_MAGIC) + 8 + size])
    if header.get("format") != FORMAT or header.get("fingerprint") != fingerprint:
        raise PostingsError("built by another version or with other settings")
    start = aligned(len(_MAGIC) + 8 + size)
    arrays: dict[str, NDArray[Any]] = {}
    for name, (dtype, shape, offset) in header["arrays"].items():
        count = int(np.prod(shape)) if shape else 1
        if start + offset + count * np.dtype(dtype).itemsize > len(mapped):
            raise PostingsError(f"truncated at {name}")
        array = np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=start + offset)
        arrays[name] = array.reshape(shape)
    paths, _, digests = arrays["keys"].tobytes().decode("utf-8").partition("\0\0")
    shas = [digests[i : i + 64] for i in range(0, len(digests), 64)]
    keys = tuple(zip(paths.split("\0") if paths else [], shas, strict=True))
    postings = Postings(
        keys=keys,
        doc_ends=arrays["doc_ends"],
        lengths=arrays["lengths"],
        lines=arrays["lines"],
        hashes=arrays["hashes"],
        terms=Terms(arrays["blob"], arrays["offsets"]),
        indptr=arrays["indptr"],
        rows=arrays["rows"],
        tf=arrays["tf"],
    )
    _check(postings)
    return postings


def _check(postings: Postings) -> None:
    """Cheap consistency checks (the ends of each array, not every value)."""
    sections = postings.sections
    if len(postings.doc_ends) != len(postings.keys):
        raise PostingsError("documents and keys disagree")
    if len(postings.doc_ends) and int(postings.doc_ends[-1]) != sections:
        raise PostingsError("documents and sections disagree")
    if len(postings.hashes) != sections or len(postings.lines) != sections:
        raise PostingsError("sections, lines and hashes disagree")
    if len(postings.indptr) != len(postings.terms) + 1 or int(postings.indptr[0]) != 0:
        raise PostingsError("bad term pointers")
    if int(postings.indptr[-1]) != len(postings.rows) or len(postings.rows) != len(postings.tf):
        raise PostingsError("term pointers and postings disagree")
    if len(postings.terms) and int(postings.terms.offsets[-1]) != len(postings.terms.blob):
        raise PostingsError("bad term offsets")
