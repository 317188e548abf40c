"""Token counters: exact OpenAI ``o200k_base`` where it is installed offline, else an estimate.

Counters are registered through the ``register_token_counters`` hook; ``[tokens] counter``
picks one by name, and ``auto`` takes ``o200k`` when it can load and ``estimate``
otherwise. :class:`CachedCounter` memoises counts by the sha256 of the text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text. ``exact`` says whether it is a real tokenizer."""

    name: str
    exact: bool

    def count(self, text: str) -> int: ...


#: ASCII letters, digits, underscore and whitespace: what is left of ASCII is punctuation.
_NOT_PUNCT = bytes(b for b in range(128) if chr(b).isalnum() or chr(b) in "_ \t\n\r\x0b\x0c")


@attrs.frozen
class EstimateCounter:
    """A fast estimate of o200k_base counts from characters, punctuation and words.

    The weights of ASCII characters, punctuation and words were fitted against real
    o200k_base counts of the fastapi and tldr corpora (shared/corpora): the total is
    within 3% on both, and nine files in ten land between 13% under and 19% over. The
    corpora hold almost no
    non-ASCII text, so its weight (0.8 per character) is set from CJK text, where
    o200k_base spends about that; it overestimates Cyrillic and Greek.
    """

    name: str = "estimate"
    exact: bool = False

    def count(self, text: str) -> int:
        if not text:
            return 0
        ascii_bytes = text.encode("ascii", "ignore")
        ascii_chars = len(ascii_bytes)
        other_chars = len(text) - ascii_chars
        punct = len(ascii_bytes.translate(None, _NOT_PUNCT))  # bytes.translate runs in C
        words = len(text.split())
        estimate = 0.2829 * ascii_chars + 0.4848 * punct - 0.6589 * words + 0.8 * other_chars
        return max(1, math.ceil(estimate))


#: sha256 of the published o200k_base.tiktoken file.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: The name tiktoken gives the file in its cache (sha1 of its download address).
O200K_CACHE_NAME = "fb374d419588a4632f3f557e76b4b70aebbca790"


def find_o200k_file() -> Path | None:
    """A local o200k_base.tiktoken file, or None. Never touches the network.

    Looks at ``CUEDECK_O200K_FILE``, tiktoken's own caches (``TIKTOKEN_CACHE_DIR``,
    ``DATA_GYM_CACHE_DIR``, the temp-dir default) and the copy litellm ships.
    """
    candidates: list[Path] = []
    if explicit := os.environ.get("CUEDECK_O200K_FILE"):
        candidates.append(Path(explicit))
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if directory := os.environ.get(var):
            candidates.append(Path(directory) / O200K_CACHE_NAME)
    candidates.append(Path(tempfile.gettempdir()) / "data-gym-cache" / O200K_CACHE_NAME)
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates.append(
                Path(location) / "litellm_core_utils" / "tokenizers" / O200K_CACHE_NAME
            )
    return next((c for c in candidates if c.is_file()), None)


#: Known counts that a working o200k_base tokenizer gives (checked before it is trusted).
O200K_SAMPLES = {"hello world, this is a test": 7, "": 0}


class O200kCounter:
    """Exact ``o200k_base`` counts: bpe-openai's native tokenizer, else tiktoken reading a
    local, hash-checked file. Neither ever downloads anything."""

    name = "o200k"
    exact = True
    #: Why an installed backend was refused (a tampered data file), for ``cue doctor``.
    refused: str | None = None

    def __init__(self, count: Callable[[str], int], backend: str) -> None:
        self._count = count
        self.backend = backend

    @classmethod
    def load(cls) -> O200kCounter | None:
        """The counter, or None when no backend is installed or none passes its checks."""
        cls.refused = None
        import warnings

        with warnings.catch_warnings():
            # bpe-openai 0.1.4 reads its data with importlib.resources.open_binary, which
            # Python deprecates; harmless, and not ours to fix.
            warnings.simplefilter("ignore", DeprecationWarning)
            counter = cls._bpe_openai() or cls._tiktoken()
        if counter is not None and any(
            counter.count(text) != expected for text, expected in O200K_SAMPLES.items()
        ):
            cls.refused = f"the {counter.backend} tokenizer miscounts known samples"
            return None
        return counter

    @classmethod
    def _bpe_openai(cls) -> O200kCounter | None:
        """bpe-openai's native counter, once the encoding it ships (or ``CUEDECK_O200K_FILE``)
        has the published sha256."""
        # The package's __init__ decodes three vocabularies in Python (about a second of
        # every process's start); only its native module is needed, so it is found and
        # loaded on its own, and the data file read from the package's folder.
        package = importlib.util.find_spec("bpe_openai")
        if package is None or not package.submodule_search_locations:
            return None
        import gzip
        from importlib import machinery

        folder = Path(next(iter(package.submodule_search_locations)))
        explicit = os.environ.get("CUEDECK_O200K_FILE")
        try:
            if explicit:
                data = Path(explicit).read_bytes()
                where = explicit
            else:
                data = gzip.decompress((folder / "data" / "o200k_base.tiktoken.gz").read_bytes())
                where = "bpe_openai/data/o200k_base.tiktoken.gz"
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            cls.refused = f"cannot read the o200k_base encoding of bpe-openai: {exc}"
            return None
        if hashlib.sha256(data).hexdigest() != O200K_SHA256:
            cls.refused = f"{where} does not have the published o200k_base sha256"
            return None
        finder = machinery.FileFinder(
            str(folder),
            (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        )
        spec = finder.find_spec("bpe_openai._bindings")
        if spec is None or spec.loader is None:
            cls.refused = "bpe-openai has no native module for this platform"
            return None
        bindings = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bindings)
        tokenizer = bindings.tokenizer_for_encoding("o200k_base")
        return cls(tokenizer.count, "bpe-openai")

    @classmethod
    def _tiktoken(cls) -> O200kCounter | None:
        """tiktoken with a local, hash-checked encoding file.

        tiktoken downloads the encoding unless its cache (``TIKTOKEN_CACHE_DIR``) holds
        it, and replaces a cached file whose hash is wrong by a fresh download. So the
        file is checked here first, then lent to tiktoken through a private cache
        directory: nothing is ever fetched.
        """
        if importlib.util.find_spec("tiktoken") is None:
            return None
        path = find_o200k_file()
        if path is None or hashlib.sha256(path.read_bytes()).hexdigest() != O200K_SHA256:
            return None
        import tiktoken

        with tempfile.TemporaryDirectory(prefix="cuedeck-tiktoken-") as cache:
            (Path(cache) / O200K_CACHE_NAME).symlink_to(path.resolve())
            previous = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = cache
            try:
                encoding = tiktoken.get_encoding("o200k_base")
            finally:
                if previous is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = previous
        return cls(lambda text: len(encoding.encode(text, disallowed_special=())), "tiktoken")

    def count(self, text: str) -> int:
        return self._count(text)


class CachedCounter:
    """Wraps a counter with an LRU memo keyed by the text's sha256."""

    def __init__(self, inner: TokenCounter, size: int = 4096) -> None:
        self.inner = inner
        self.name = inner.name
        self.exact = inner.exact
        self._memo: OrderedDict[bytes, int] = OrderedDict()
        self._size = size

    def count(self, text: str) -> int:
        if len(text) < 256:
            return self.inner.count(text)  # hashing costs as much as counting
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        if (hit := self._memo.get(key)) is not None:
            self._memo.move_to_end(key)
            return hit
        value = self.inner.count(text)
        self._memo[key] = value
        if len(self._memo) > self._size:
            self._memo.popitem(last=False)
        return value
