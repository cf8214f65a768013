"""The ``governor serve`` command: the guard service (:mod:`governor.serve`) under uvicorn.

``--policy`` names a policy file (default: the shipped small-talk overlays policy); ``--upstream``
and ``--model`` replace its upstream's base URL and model; ``--store`` is ``sqlite:PATH`` (the
default, ``sqlite:governor-sessions.sqlite3``), ``memory`` or ``postgres:DSN`` (a libpq DSN or
``postgresql://`` URL: several instances may share one database; the ``[postgres]`` extra);
client API keys are the sha256 digests in the file named by ``$GOVERNOR_API_KEY_HASHES_FILE`` and
any ``--api-key-hash``.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.errors import ConfigError, expected
from governor.guard import Guard, GuardPolicy, load_policy
from governor.guard.stores import store_from, store_label

DEFAULT_STORE = "sqlite:governor-sessions.sqlite3"


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` command to ``subparsers``."""
    serve = subparsers.add_parser(
        "serve", help="run the OpenAI-compatible guard service in front of an upstream model"
    )
    serve.add_argument("--policy", type=Path, help="guard policy file (default: small talk)")
    serve.add_argument("--upstream", help="the upstream's base URL (replaces the policy's)")
    serve.add_argument("--model", help="the upstream's model (replaces the policy's)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (%(default)s)")
    serve.add_argument("--port", type=int, default=8080, help="port to listen on (%(default)s)")
    serve.add_argument(
        "--store",
        default=DEFAULT_STORE,
        help="sqlite:PATH, memory or postgres:DSN (default: %(default)s)",
    )
    serve.add_argument(
        "--api-key-hash",
        action="append",
        default=[],
        metavar="SHA256",
        help="accept the client key with this sha256 hex digest (repeatable; also the file"
        " named by $GOVERNOR_API_KEY_HASHES_FILE)",
    )
    serve.add_argument(
        "--admin-key-hash",
        metavar="SHA256",
        default=os.environ.get("GOVERNOR_ADMIN_KEY_HASH"),
        help="enable the /admin routes for the key with this sha256 hex digest (default:"
        " $GOVERNOR_ADMIN_KEY_HASH; none: no admin routes)",
    )
    serve.set_defaults(handler=serve_command)
    return serve


def serve_command(args: argparse.Namespace, console: Console) -> int:
    try:
        import uvicorn

        from governor.serve import (
            KeyChecker,
            create_app,
            default_policy,
            load_key_hashes,
            with_upstream,
        )
        from governor.serve.auth import KEYS_FILE_ENV
    except ImportError as exc:
        raise ConfigError(
            f"serve: expected the [serve] extra (pip install -e '.[serve]' in the governor checkout), found {exc}"
        ) from None
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port: {expected('a port in [0, 65535]', args.port)}")
    policy: GuardPolicy = default_policy() if args.policy is None else load_policy(args.policy)
    policy = with_upstream(policy, base_url=args.upstream, model=args.model)
    digests = list(args.api_key_hash)
    keys_file = os.environ.get(KEYS_FILE_ENV)
    if keys_file:
        digests += load_key_hashes(keys_file)
    keys = KeyChecker(digests)
    store = store_from(args.store)
    guard = Guard.from_policy(policy, store=store)
    admin = args.admin_key_hash
    if admin is not None and not re.fullmatch(r"[0-9a-f]{64}", admin):
        raise ConfigError("--admin-key-hash: expected a sha256 hex digest (64 hex digits)")
    app = create_app(guard, keys=keys, admin_key_hash=admin)
    up = policy.upstream
    console.print(
        f"governor serve: {policy.source} in front of {up.model} at {up.base_url};"
        f" store {store_label(args.store, store)}; client keys {'required' if keys.enabled else 'not required'}",
        markup=False,
        soft_wrap=True,
    )
    console.print(f"listening on http://{args.host}:{args.port}/v1", markup=False)
    # What was loaded at start (policy, overlays, models) lives as long as the process: out of
    # the collector's view, a full collection under load pauses for milliseconds, not 100s.
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
