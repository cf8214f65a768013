"""The ``governor serve`` command: the guard service (:mod:`governor.serve`) under uvicorn.

``--policy`` names a policy file (default: the shipped small-talk overlays policy); ``--upstream``
and ``--model`` replace its upstream's base URL and model; ``--model-path`` (``gemma3-270m`` or a
transformers folder) runs a local model in-process as the upstream instead
(:mod:`governor.backends.local_worker`); ``--store`` is ``sqlite:PATH`` (the
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

from governor.backends import Backend
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
    serve.add_argument(
        "--model-path",
        metavar="PATH",
        help="run a local model in-process as the upstream instead: gemma3-270m (fetched by"
        " `governor model fetch`) or a transformers folder (docs/local-model.md)",
    )
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
    limits = serve.add_argument_group("limits (docs/security.md)")
    limits.add_argument(
        "--max-request-messages",
        type=int,
        default=20_000,
        metavar="N",
        help="messages one request may carry (413 beyond; %(default)s)",
    )
    limits.add_argument(
        "--max-session-messages",
        type=int,
        default=100_000,
        metavar="N",
        help="messages a stored session may hold (400 beyond; %(default)s)",
    )
    limits.add_argument(
        "--rate-limit",
        type=float,
        metavar="PER_S",
        help="requests a second per client key (429 beyond; default: none)",
    )
    limits.add_argument(
        "--rate-burst",
        type=int,
        default=20,
        metavar="N",
        help="requests a key may make at once above --rate-limit (%(default)s)",
    )
    limits.add_argument(
        "--session-quota",
        type=float,
        metavar="PER_HOUR",
        help="new sessions an hour per client key (429 beyond; default: none)",
    )
    limits.add_argument(
        "--session-burst",
        type=int,
        default=100,
        metavar="N",
        help="new sessions a key may open at once (%(default)s)",
    )
    limits.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        metavar="N",
        help="connections served at once (503 beyond; %(default)s)",
    )
    limits.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a request's head may take to arrive (%(default)s)",
    )
    limits.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a request's body may take to arrive (408; %(default)s)",
    )
    limits.add_argument(
        "--keep-alive",
        type=int,
        default=5,
        metavar="S",
        help="seconds an idle connection stays open (%(default)s)",
    )
    serve.set_defaults(handler=serve_command)
    return serve


def serve_command(args: argparse.Namespace, console: Console) -> int:
    try:
        import uvicorn

        from governor.serve.connections import uvicorn_options
    except ImportError as exc:
        raise ConfigError(
            f"serve: expected the [serve] extra (pip install -e '.[serve]' in the governor checkout), found {exc}"
        ) from None
    app = build_app(args, console)
    # What was loaded at start (policy, overlays, models) lives as long as the process: out of
    # the collector's view, a full collection under load pauses for milliseconds, not 100s.
    gc.collect()
    gc.freeze()
    connections = uvicorn_options(
        header_timeout_s=args.header_timeout,
        keep_alive_s=args.keep_alive,
        max_connections=args.max_connections,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **connections)
    return 0


def build_app(args: argparse.Namespace, console: Console) -> Any:
    """The service's app from the parsed ``serve`` arguments (its start-up lines on ``console``)."""
    try:
        from governor.serve import (
            KeyChecker,
            create_app,
            default_policy,
            load_key_hashes,
            with_upstream,
        )
        from governor.serve.app import Limits
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
    for flag in ("max_request_messages", "max_session_messages", "max_connections"):
        if getattr(args, flag) < 1:
            raise ConfigError(
                f"--{flag.replace('_', '-')}: {expected('at least 1', getattr(args, flag))}"
            )
    for flag in ("header_timeout", "body_timeout"):
        if not getattr(args, flag) > 0:
            raise ConfigError(
                f"--{flag.replace('_', '-')}: {expected('seconds > 0', getattr(args, flag))}"
            )
    limits = Limits(
        max_request_messages=args.max_request_messages,
        body_timeout_s=args.body_timeout,
        requests_per_s=args.rate_limit,
        request_burst=args.rate_burst,
        sessions_per_hour=args.session_quota,
        session_burst=args.session_burst,
    )
    admin = args.admin_key_hash
    if admin is not None and not re.fullmatch(r"[0-9a-f]{64}", admin):
        raise ConfigError("--admin-key-hash: expected a sha256 hex digest (64 hex digits)")
    store = store_from(args.store)
    backend = local_upstream(args, policy)  # last of the checks: loading takes seconds
    guard = Guard.from_policy(
        policy, backend=backend, store=store, max_session_messages=args.max_session_messages
    )
    app = create_app(guard, keys=keys, admin_key_hash=admin, limits=limits)
    up = policy.upstream
    upstream = f"{up.model} at {up.base_url}" if backend is None else f"{backend.name} in-process"
    console.print(
        f"governor serve: {policy.source} in front of {upstream};"
        f" store {store_label(args.store, store)}; client keys {'required' if keys.enabled else 'not required'}",
        markup=False,
        soft_wrap=True,
    )
    console.print(f"listening on http://{args.host}:{args.port}/v1", markup=False)
    return app


def local_upstream(args: argparse.Namespace, policy: GuardPolicy) -> Backend | None:
    """The in-process model of ``--model-path`` behind its generation worker (one generation at
    a time, each cut at the step's deadline or the upstream's ``timeout_s``); None without it."""
    if args.model_path is None:
        return None
    if args.upstream is not None or args.model is not None:
        raise ConfigError(
            "--model-path: expected it alone as the upstream, found --upstream or --model too"
        )
    from governor.backends.local_worker import served_backend

    return served_backend(args.model_path, timeout_s=policy.upstream.timeout_s)
