"""Where a team server gets its identity provider's signing keys: a JSON Web Key Set in a
file the operator keeps current, or at the provider's URL (``jwks_uri``).

A file is read again when it changes. A URL is fetched when first needed, again when its
copy is older than :data:`MAX_AGE` (or the reply's ``Cache-Control: max-age``, within
bounds), and again when a token names a key id the copy lacks (the provider rotated its
keys) but never more often than every :data:`REFETCH_FLOOR` seconds, so tokens with made-up
key ids cannot make the server hammer the provider. A fetch that fails keeps serving the
last good copy; with none, sign-in fails with 1411 naming the URL.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.request
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from cuedeck_team.errors import SignInMisconfigured

if TYPE_CHECKING:
    from pathlib import Path

log = logging.getLogger("cuedeck")

#: How long a fetched key set is used before it is fetched again, at most and by default.
MAX_AGE = 3600.0
#: The shortest time a reply's max-age may set.
MIN_AGE = 60.0
#: The least time between two fetches (an unknown key id asks for one).
REFETCH_FLOOR = 30.0
#: How long a fetch may take.
TIMEOUT = 5.0
#: The largest key set read (a provider's is a few kilobytes).
MAX_BYTES = 1 << 20
_MAX_AGE = re.compile(r"max-age=(\d+)")
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class KeySource(Protocol):
    """Signing keys by key id."""

    #: Where the keys come from, for messages.
    where: str

    def keys(self, *, wanted: str | None = None) -> dict[str, Any]:
        """Key id -> key; ``wanted``: a key id a token names (a source may look again
        for it); 1411 when no key set can be had."""
        ...


def parse_key_set(data: Any, where: str) -> dict[str, Any]:
    """Key id -> key of the JWKS document ``data``; 1411 naming ``where`` when it is none."""
    import jwt

    try:
        found = jwt.PyJWKSet.from_dict(data)
    except (jwt.PyJWTError, ValueError, TypeError, AttributeError) as exc:
        raise _unreadable(where, exc) from None
    return {key.key_id: key for key in found.keys if key.key_id}


class FileKeys:
    """The key set in the file at ``path``, read again when it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._keys: dict[str, Any] = {}
        self._seen: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def keys(self, *, wanted: str | None = None) -> dict[str, Any]:
        """The file's keys (``wanted`` changes nothing: the file is the truth)."""
        try:
            stat = self.path.stat()
            seen = (stat.st_mtime_ns, stat.st_size)
            with self._lock:
                if seen != self._seen:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    self._keys = parse_key_set(data, self.where)
                    self._seen = seen
                return self._keys
        except (OSError, ValueError) as exc:
            raise _unreadable(self.where, exc) from None


class UrlKeys:
    """The key set at ``url`` (https, or http on a loopback address), fetched as the
    module's docstring says."""

    def __init__(self, url: str, *, clock: Any = time.monotonic) -> None:
        check_url(url)
        self.url = url
        self.where = url
        self._clock = clock
        self._keys: dict[str, Any] | None = None
        self._fetched = float("-inf")  # when the last fetch was tried
        self._expires = float("-inf")
        self._lock = threading.Lock()

    def keys(self, *, wanted: str | None = None) -> dict[str, Any]:
        """The provider's keys, fetched when stale or when ``wanted`` is missing."""
        with self._lock:
            now = self._clock()
            missing = wanted is not None and self._keys is not None and wanted not in self._keys
            stale = now >= self._expires
            if (self._keys is None or stale or missing) and now - self._fetched >= REFETCH_FLOOR:
                self._fetch(now)
            if self._keys is None:
                raise _unreadable(self.url, "no key set was fetched yet")
            return self._keys

    def _fetch(self, now: float) -> None:
        import urllib.error

        self._fetched = now
        request = urllib.request.Request(self.url, headers={"Accept": "application/json"})
        # No redirects: the URL checked is the one fetched.
        opener = urllib.request.build_opener(_NoRedirects)
        try:
            with opener.open(request, timeout=TIMEOUT) as reply:
                body = reply.read(MAX_BYTES + 1)
                if len(body) > MAX_BYTES:
                    raise ValueError(f"the key set is over {MAX_BYTES} bytes")
                age = _max_age(reply.headers.get("Cache-Control", ""))
            keys = parse_key_set(json.loads(body), self.url)
        except (OSError, ValueError, urllib.error.URLError, SignInMisconfigured) as exc:
            if self._keys is None:
                raise _unreadable(self.url, exc) from None
            log.warning("the key set at %s could not be fetched again: %s", self.url, exc)
            return
        self._keys = keys
        self._expires = now + age


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the provider's redirect is an error (HTTPError), not followed


def check_url(url: str) -> str:
    """``url`` if a key set may be fetched from it: https, or http to a loopback address
    (a provider on the same machine); else 1411."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host in _LOOPBACK:
        return url
    raise SignInMisconfigured(
        f"[team] jwks_url must be an https URL (http only on a loopback address): {url!r}",
        help="use the provider's jwks_uri, from its OpenID configuration",
    )


def _max_age(header: str) -> float:
    found = _MAX_AGE.search(header)
    if found is None:
        return MAX_AGE
    return min(MAX_AGE, max(MIN_AGE, float(found.group(1))))


def _unreadable(where: str, cause: object) -> SignInMisconfigured:
    detail = f"{type(cause).__name__}: {cause}" if isinstance(cause, Exception) else str(cause)
    return SignInMisconfigured(
        f"the identity provider's key set cannot be read ({detail})",
        path=where,
        help="point [team] jwks_file at the provider's JWKS document, or jwks_url at its jwks_uri",
    )
