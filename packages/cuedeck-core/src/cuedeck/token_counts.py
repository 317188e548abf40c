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
import threading
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
#: sha256 of bpe-openai's gzip archive of that file, per released version (0.1.4); an
#: archive not listed here is decompressed and checked against O200K_SHA256.
O200K_GZ_SHA256 = frozenset({"aa7f57c462db101b58b6648a2b0047128f61e68c0776814ad75251aab1bccdfa"})
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
    import tempfile

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
        if counter is not None and counter.backend != "bpe-openai" and not counter.sane():
            cls.refused = f"the {counter.backend} tokenizer miscounts known samples"
            return None
        return counter

    @classmethod
    def _bpe_openai(cls) -> O200kCounter | None:
        """bpe-openai's native counter, once the encoding it ships (or ``CUEDECK_O200K_FILE``)
        has the published sha256.

        The package is located, not imported: its ``__init__`` builds every encoding it
        knows (about a second), which a process that never counts would pay for. The
        native tokenizer is made on the first count, from the extension module alone.
        """
        spec = importlib.util.find_spec("bpe_openai")
        if spec is None or not spec.submodule_search_locations:
            return None
        import gzip

        from cuedeck.system.remembered import file_key, recall, remember

        package = Path(next(iter(spec.submodule_search_locations)))
        explicit = os.environ.get("CUEDECK_O200K_FILE")
        source = explicit or str(package / "data" / "o200k_base.tiktoken.gz")
        # A file checked before and unchanged since (same inode, size and times) is not
        # read and hashed again: 1.7 MB at every start of `cue`.
        stamp = ["o200k", source, file_key(source)]
        if stamp[2] is not None and recall("verified/o200k.json", stamp) == O200K_SHA256:
            return cls(_LazyNativeCount(package), "bpe-openai")
        known = False
        try:
            if explicit:
                data = Path(explicit).read_bytes()
                where = explicit
            else:
                packed = Path(source).read_bytes()
                where = "bpe_openai/data/o200k_base.tiktoken.gz"
                # The archive as released holds the published file: its own hash is
                # enough, and saves decompressing 3.6 MB in every process.
                known = hashlib.sha256(packed).hexdigest() in O200K_GZ_SHA256
                data = b"" if known else gzip.decompress(packed)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            cls.refused = f"cannot read the o200k_base encoding of bpe-openai: {exc}"
            return None
        if not known and hashlib.sha256(data).hexdigest() != O200K_SHA256:
            cls.refused = f"{where} does not have the published o200k_base sha256"
            return None
        if stamp[2] is not None and stamp[2] == file_key(source):  # unchanged while read
            remember("verified/o200k.json", stamp, O200K_SHA256)
        return cls(_LazyNativeCount(package), "bpe-openai")

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
        import tempfile

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

    def sane(self) -> bool:
        """Whether the known samples count as they should."""
        return not miscounted(self.count)


def miscounted(count: Callable[[str], int]) -> dict[str, int]:
    """The known samples ``count`` gets wrong, with the count it gave."""
    return {text: n for text in O200K_SAMPLES if (n := count(text)) != O200K_SAMPLES[text]}


class _LazyNativeCount:
    """bpe-openai's ``count``, its tokenizer built on the first call and checked against
    the known samples before any count is trusted."""

    def __init__(self, package: Path) -> None:
        self.package = package
        self._count: Callable[[str], int] | None = None
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        if self._count is None:
            with self._lock:
                if self._count is None:
                    self._count = self._load()
        return self._count(text)

    def _load(self) -> Callable[[str], int]:
        from cuedeck.errors import MissingExtra, install_hint

        reinstall = "reinstall it: " + install_hint(
            "tokens", distribution="cuedeck-core", reinstall=True
        )

        library = next(self.package.glob("_bindings*.so"), None) or next(
            self.package.glob("_bindings*.pyd"), None
        )
        if library is None:
            raise MissingExtra(
                f"bpe-openai's native module is missing from {self.package}", help=reinstall
            )
        spec = importlib.util.spec_from_file_location("bpe_openai._bindings", library)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        count: Callable[[str], int] = module.tokenizer_for_encoding("o200k_base").count
        wrong = miscounted(count)
        if wrong:
            raise MissingExtra(
                f"bpe-openai's o200k_base tokenizer miscounts known samples: {wrong}",
                help=reinstall,
            )
        return count


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
