"""Client API keys: ``Authorization: Bearer <key>`` against stored sha256 digests.

The service keeps only digests (hex, one a line in a file named by an environment variable, or
given as flags); a presented key is hashed and compared with every digest by
``hmac.compare_digest``. No digests configured: no key is asked for. The digest of an accepted
key owns the sessions its requests name (:func:`governor.guard.facade.owned_id`). Imports the error tree and
the service's errors.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from pathlib import Path

from governor.errors import ConfigError, expected
from governor.serve.api_errors import ApiError

HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
KEYS_FILE_ENV = "GOVERNOR_API_KEY_HASHES_FILE"
"""The environment variable naming a file of sha256 hex digests of the accepted client keys."""


def digest(key: str) -> str:
    """The sha256 hex digest of ``key`` (what a keys file holds)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def checked_digest(value: str, where: str) -> str:
    text = value.strip().lower()
    if not HEX_DIGEST.fullmatch(text):
        raise ConfigError(f"{where}: {expected('a sha256 hex digest (64 hex digits)', value)}")
    return text


def load_key_hashes(path: str | Path) -> list[str]:
    """The digests in ``path``: one a line; blank lines and ``#`` comments skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"API key hashes file {path}: cannot read: {exc.strerror}") from None
    return [
        checked_digest(line, f"{path}:{i}")
        for i, line in enumerate(lines, 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


class KeyChecker:
    """Accepts a request when no digests are configured, or when its bearer key hashes to one."""

    def __init__(self, digests: Iterable[str] = ()) -> None:
        self.digests = tuple(checked_digest(d, "API key hash") for d in digests)

    @property
    def enabled(self) -> bool:
        return bool(self.digests)

    def check(self, authorization: str | None) -> str | None:
        """The digest of the accepted key the ``Authorization`` header carries (the owner of
        the sessions it names; None when no keys are configured); a 401 ApiError otherwise."""
        if not self.digests:
            return None
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ApiError(
                401,
                "expected an API key as 'Authorization: Bearer <key>', found none",
                code="invalid_api_key",
            )
        given = digest(key.strip())
        ok = False
        for d in self.digests:  # compare with every digest: the time says nothing about which
            ok |= hmac.compare_digest(given, d)
        if not ok:
            raise ApiError(401, "the API key given is not accepted", code="invalid_api_key")
        return given
