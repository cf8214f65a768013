"""Helpers of the service-edge attack tests (tests/security/test_tenancy.py, test_limits.py,
test_retries.py, test_policy_change.py): ``governor serve``'s app under uvicorn with two client
keys and an admin key, in front of the scripted fake upstream, and the official ``openai``
client for each key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import openai
from security_helpers import OPENED
from serve_helpers import tools_guard

from governor.guard import Guard
from governor.serve import KeyChecker, create_app
from governor.serve.auth import digest
from governor.serve.local import serving

ALICE_KEY = "sk-alice-0123456789"
BOB_KEY = "sk-bob-0123456789"
ADMIN_KEY = "sk-admin-0123456789"
KEYS = KeyChecker([digest(ALICE_KEY), digest(BOB_KEY)])


def owner_prefix(key: str) -> str:
    """How the admin routes name a key's sessions: its digest's first 32 hex digits, then ``/``."""
    return digest(key)[:32] + "/"


@contextmanager
def edge_service(
    guard: Guard, *, uvicorn: dict[str, Any] | None = None, **app: Any
) -> Iterator[str]:
    """The service over ``guard`` with Alice's and Bob's keys and the admin key (``app``: more
    of :func:`create_app`'s options, ``uvicorn``: uvicorn's); its base URL."""
    made = create_app(guard, keys=KEYS, admin_key_hash=digest(ADMIN_KEY), **app)
    with serving(made, **(uvicorn or {})) as url:
        yield url


def client(base: str, key: str, **options: Any) -> openai.OpenAI:
    """The official client for ``key`` (no retries unless asked), closed after the test."""
    made = openai.OpenAI(base_url=f"{base}/v1", api_key=key, **{"max_retries": 0, **options})
    OPENED.append(made)
    return made


def admin_get(base: str, stored_id: str) -> httpx.Response:
    with httpx.Client(base_url=base) as http:
        return http.get(
            f"/admin/sessions/{stored_id}", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )


def guard_for(url: str, **kw: Any) -> Guard:
    return tools_guard(url, **kw)
