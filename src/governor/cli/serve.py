"""The ``governor serve`` command: the guard service (:mod:`governor.serve`) under uvicorn.

``--policy`` names the policies served (repeatable): ``NAME=FILE``, a bare ``FILE`` (named by its
stem) or a directory (each ``*.yaml`` in it, named by its stem); default: the shipped small-talk
overlays policy. A request picks one by its ``model`` (``governor/NAME``) or the
``X-Governor-Policy`` header (:mod:`governor.serve.policies`); the files are polled every
``--policy-poll`` seconds and reloaded on SIGHUP (validated first: a bad file keeps the old policy).
``--upstream`` and ``--model`` replace each policy's upstream base URL and model; ``--model-path``
(``gemma3-270m`` or a transformers folder) runs a local model in-process as every policy's upstream
instead, loaded once (:mod:`governor.backends.local_worker`); ``--store`` is ``sqlite:PATH`` (the
default, ``sqlite:governor-sessions.sqlite3``), ``memory`` or ``postgres:DSN`` (a libpq DSN or
``postgresql://`` URL: several instances may share one database; the ``[postgres]`` extra);
client API keys are the sha256 digests in the file named by ``$GOVERNOR_API_KEY_HASHES_FILE`` and
any ``--api-key-hash``. ``--decision-log`` sends one JSON line per decision to stderr (the
default), a file, or nowhere (:mod:`governor.serve.decision_log`). A policy whose upstream's
``api_key_env`` names an unset variable is warned of at start. uvicorn's access line per HTTP
request is off unless ``--access-log`` (the decision log is the record of what was decided).
``--workers N`` serves from N processes sharing the listening socket and
the store (the parent builds the app once to check the arguments, then starts and watches the
workers, each building its own).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.backends import Backend
from governor.errors import ConfigError, expected
from governor.guard import Guard, GuardPolicy
from governor.guard.stores import store_from, store_label

DEFAULT_STORE = "sqlite:governor-sessions.sqlite3"


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` command to ``subparsers``."""
    serve = subparsers.add_parser(
        "serve", help="run the OpenAI-compatible guard service in front of an upstream model"
    )
    serve.add_argument(
        "--policy",
        action="append",
        metavar="NAME=FILE|FILE|DIR",
        help="a policy to serve (repeatable): NAME=FILE, FILE (named by its stem) or a directory"
        " of *.yaml files (default: the small-talk policy)",
    )
    serve.add_argument(
        "--policy-poll",
        type=float,
        default=2.0,
        metavar="S",
        help="seconds between looks at the policy files for changes (0: only on SIGHUP;"
        " %(default)s)",
    )
    serve.add_argument(
        "--decision-log",
        default="-",
        metavar="PATH|-|off",
        help="one JSON line per decision: - (stderr, the default), a file, or off",
    )
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="uvicorn's access line per HTTP request besides the decision log (default: off)",
    )
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
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the port and the store (sqlite or postgres; %(default)s)",
    )
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
    serve.add_argument(
        "--policy-key",
        action="append",
        default=[],
        metavar="NAME=SHA256",
        help="serve policy NAME only to the client key with this sha256 hex digest (repeatable;"
        " a policy named in none: every client key's)",
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
        import uvicorn  # noqa: F401  (the [serve] extra is there)
    except ImportError as exc:
        raise ConfigError(
            f"serve: expected the [serve] extra (pip install -e '.[serve]' in the governor checkout), found {exc}"
        ) from None
    # a SIGHUP before the policies are watched (a reload sent just after a restart) is ignored,
    # not the end of the process; workers start with it ignored too, until they watch theirs
    hup = getattr(signal, "SIGHUP", None)
    before = None if hup is None else signal.signal(hup, signal.SIG_IGN)
    try:
        return _serve(args, console)
    finally:
        if hup is not None:
            signal.signal(hup, before if before is not None else signal.SIG_DFL)


def _serve(args: argparse.Namespace, console: Console) -> int:
    import uvicorn

    from governor.serve.decision_log import configure

    app = build_app(args, console, warm=args.workers <= 1)  # (workers warm their own)
    if args.workers > 1:
        del app  # each worker builds its own
        gc.collect()
        return _serve_workers(args)
    restore_log = configure(args.decision_log)
    stop_reload = watch_policies(app.state.service.policies, args.policy_poll)
    restore_heap = _settle_heap()
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="info", **_connections(args))
    finally:
        stop_reload()
        restore_log()
        restore_heap()
    return 0


def _connections(args: argparse.Namespace) -> dict[str, Any]:
    from governor.serve.connections import uvicorn_options

    return {
        **uvicorn_options(
            header_timeout_s=args.header_timeout,
            keep_alive_s=args.keep_alive,
            max_connections=args.max_connections,
        ),
        "access_log": args.access_log,
    }


def watch_policies(policies: Any, poll_s: float) -> Callable[[], None]:
    """Reload ``policies`` (:class:`governor.serve.policies.ServedPolicies`) when their files
    change (every ``poll_s`` seconds; 0: never by polling) and on SIGHUP, in a thread of their
    own; the function that stops watching and puts the SIGHUP handler back."""
    if poll_s < 0:
        raise ConfigError(f"--policy-poll: {expected('seconds >= 0', poll_s)}")
    stop = policies.watch(poll_s if poll_s > 0 else 365 * 86400.0)
    hup = getattr(signal, "SIGHUP", None)
    before = None
    if hup is not None:
        try:
            before = signal.signal(hup, lambda *_: policies.request_reload())
        except ValueError:  # not the main thread: no signal handler, polling only
            hup = None

    def stopped() -> None:
        stop()
        if hup is not None:
            signal.signal(hup, before if before is not None else signal.SIG_DFL)

    return stopped


def policy_files(specs: list[str]) -> tuple[dict[str, Path], bool]:
    """The policy files of ``--policy`` (name: file) and whether their sessions are namespaced
    by policy (all but a single policy given as a bare file)."""
    from governor.serve.policies import POLICY_NAME, policy_name

    files: dict[str, Path] = {}
    bare = 0
    for spec in specs:
        name, sep, rest = spec.partition("=")
        if sep and POLICY_NAME.fullmatch(name):
            found = {name: Path(rest)}
            if Path(rest).is_dir():
                raise ConfigError(f"--policy {spec}: expected NAME=FILE, found a directory")
        elif Path(spec).is_dir():
            found = {p.stem: p for p in sorted(Path(spec).glob("*.yaml"))}
            if not found:
                raise ConfigError(f"--policy {spec}: expected *.yaml files, found none")
        else:
            found, bare = {Path(spec).stem: Path(spec)}, bare + 1
        for name, path in found.items():
            policy_name(name, f"--policy {path} (give it one as NAME=FILE)")
            if name in files:
                raise ConfigError(f"--policy: expected each name once, found {name} twice")
            if not path.is_file():
                raise ConfigError(f"--policy {path}: expected a policy file, found none")
            files[name] = path
    return files, not (len(files) == 1 and bare == 1)


WORKER_RESTART_S = 1.0
"""The least time between two starts of one worker slot (a worker that dies at once is not
restarted in a tight loop)."""
WORKER_STABLE_S = 30.0
"""A worker that lived this long before it exited is restarted after WORKER_RESTART_S; one that
died sooner waits twice as long as the last time, up to WORKER_RESTART_MAX_S."""
WORKER_RESTART_MAX_S = 30.0


SPREAD = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")
"""Whether each worker listens on a socket of its own on the shared port (``SO_REUSEPORT``: the
kernel spreads new connections evenly over them); elsewhere the workers share one socket, and a
new connection goes to whichever worker accepts first (unevenly, under load)."""


def _listening(host: str, port: int, *, listen: bool = True, spread: bool = False) -> socket.socket:
    """A TCP socket on ``host``:``port`` (``IPPROTO_TCP``, so that asyncio sets ``TCP_NODELAY``
    on accepted connections), listening unless ``listen`` is false; ``spread``: one of the
    ``SO_REUSEPORT`` group on that port (:data:`SPREAD`)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if spread:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        if listen:
            sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"serve: cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    return sock


def _serve_workers(args: argparse.Namespace) -> int:
    """Serve from ``args.workers`` processes on one listening socket until SIGINT or SIGTERM; a
    worker that exits is started again (after :data:`WORKER_RESTART_S`, or longer for one that keeps
    dying at start)."""
    # with SPREAD the parent's socket only holds the port (bound, never listening: it takes no
    # connection) and each worker listens on one of its own; else all share the parent's
    sock = _listening(args.host, args.port, listen=not SPREAD, spread=SPREAD)
    options = {k: v for k, v in vars(args).items() if k != "handler"}
    options["port"] = sock.getsockname()[1]  # (port 0: the one the system picked)
    from governor.serve.limits import make_shared_files

    # what the workers keep together (rate limits, the counters of /metrics), removed at the end
    options["worker_dir"] = shared_dir = tempfile.mkdtemp(prefix="governor-serve-")
    try:  # (made here once: a worker only opens them)
        make_shared_files(shared_dir)
    except OSError as exc:
        shutil.rmtree(shared_dir, ignore_errors=True)
        sock.close()
        raise ConfigError(f"--workers: cannot make the files the workers share: {exc}") from exc
    context = multiprocessing.get_context("spawn")
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    workers: list[Any] = [None] * args.workers

    def reload(signum: int, frame: Any) -> None:  # each worker reloads its own policies
        for worker in workers:
            if worker is not None and worker.is_alive() and worker.pid is not None:
                os.kill(worker.pid, signal.SIGHUP)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    if hasattr(signal, "SIGHUP"):
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, reload)
    started = [0.0] * args.workers
    wait = [WORKER_RESTART_S] * args.workers
    touched = time.monotonic()
    try:
        while not stopping:
            if time.monotonic() - touched > KEEP_FRESH_S:
                _keep_fresh(shared_dir)
                touched = time.monotonic()
            for i, worker in enumerate(workers):
                if worker is not None and worker.is_alive():
                    continue
                if time.monotonic() - started[i] < wait[i]:
                    continue
                if worker is not None:
                    lived = time.monotonic() - started[i]
                    # one that keeps dying at start (a policy file broken since) is retried
                    # ever less often, up to once a WORKER_RESTART_MAX_S
                    wait[i] = (
                        WORKER_RESTART_S
                        if lived > WORKER_STABLE_S
                        else min(2 * wait[i], WORKER_RESTART_MAX_S)
                    )
                    print(
                        f"governor serve: worker {i} exited ({worker.exitcode}) after"
                        f" {lived:.1f} s; starting it again in {wait[i]:g} s",
                        file=sys.stderr,
                        flush=True,
                    )
                    workers[i] = None  # its exit is handled: the slot waits, then starts
                    started[i] = time.monotonic()
                    continue
                shared = None if SPREAD else sock
                workers[i] = context.Process(
                    target=_worker, args=(options, shared, i), daemon=False
                )
                workers[i].start()
                started[i] = time.monotonic()
            time.sleep(0.2)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        live = [w for w in workers if w is not None and w.is_alive()]
        for w in live:
            w.terminate()  # SIGTERM: uvicorn finishes the requests in flight
        for w in live:
            w.join(30)
            if w.is_alive():
                w.kill()
                w.join(5)
        sock.close()
        shutil.rmtree(shared_dir, ignore_errors=True)
    return 0


KEEP_FRESH_S = 3600.0
"""How often the parent touches the workers' folder and its files: a cleaner of /tmp removes
what was not touched for days, and the buckets are written through a mapping, which changes no
time on tmpfs."""


def _keep_fresh(folder: str) -> None:
    """Set the times of ``folder`` and of what it holds to now (what is gone: nothing)."""
    try:
        entries = [entry.path for entry in os.scandir(folder)]
    except OSError:
        return
    for path in [folder, *entries]:
        with contextlib.suppress(OSError):
            os.utime(path)


YOUNG_OBJECTS = 10_000
"""How many more container objects than freed may be made before the collector looks at the
youngest ones (Python's default: 700). A request makes and drops thousands of small objects,
nearly all freed by reference counting; at 700 the collector walked them several times a
request, about 3% of a governed request's instructions."""


def _settle_heap() -> Callable[[], None]:
    """Before serving: what was loaded at start (policy, overlays, models) lives as long as the
    process, so it is put out of the collector's view (a full collection under load then pauses
    for milliseconds, not 100s), and the youngest objects are collected every
    :data:`YOUNG_OBJECTS` instead of every 700. Gives back the function that puts the collector
    back as it was (a caller serving in its own process, as a test does, goes on with it)."""
    threshold = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *threshold[1:])

    def restored() -> None:
        gc.unfreeze()
        gc.set_threshold(*threshold)

    return restored


def _worker(options: dict[str, Any], shared: socket.socket | None, index: int) -> None:
    """Worker ``index``: the app from the same arguments, served on the parent's socket
    (``shared``) or, with :data:`SPREAD`, on a socket of its own on the same port; each answer
    says which worker gave it (``X-Governor-Worker``)."""
    import uvicorn

    from governor.serve.decision_log import configure

    args = argparse.Namespace(**options)
    built = build_app(args, Console(quiet=True), worker=index)
    sock = shared if shared is not None else _listening(args.host, args.port, spread=True)
    _settle_heap()  # (the process ends with the service)
    config = uvicorn.Config(_tagged(built, index), log_level="info", **_connections(args))
    restore_log = configure(args.decision_log)
    stop_reload = watch_policies(built.state.service.policies, args.policy_poll)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        stop_reload()
        restore_log()


def build_app(
    args: argparse.Namespace, console: Console, *, warm: bool = True, worker: int = 0
) -> Any:
    """The service's app from the parsed ``serve`` arguments (its start-up lines on ``console``);
    ``warm``: each guard judges one reply when built (:meth:`Guard.warm`), not for an app built
    only to check the arguments. ``worker``: which of ``--workers`` it serves (their shared
    folder is ``args.worker_dir``, set by :func:`_serve_workers`)."""
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
        from governor.serve.policies import ServedPolicies
    except ImportError as exc:
        raise ConfigError(
            f"serve: expected the [serve] extra (pip install -e '.[serve]' in the governor checkout), found {exc}"
        ) from None
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port: {expected('a port in [0, 65535]', args.port)}")
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
    if args.workers < 1:
        raise ConfigError(f"--workers: {expected('at least 1', args.workers)}")
    admin = args.admin_key_hash
    if admin is not None and not re.fullmatch(r"[0-9a-f]{64}", admin):
        raise ConfigError("--admin-key-hash: expected a sha256 hex digest (64 hex digits)")
    if args.policy_poll < 0:
        raise ConfigError(f"--policy-poll: {expected('seconds >= 0', args.policy_poll)}")
    files, namespaced = policy_files(args.policy or [])
    store = store_from(args.store, processes=args.workers)
    local = local_upstream(args)  # last of the checks: loading takes seconds

    def build(policy: GuardPolicy, old: Guard | None) -> Guard:
        policy = with_upstream(policy, base_url=args.upstream, model=args.model)
        backend = local  # the in-process model, shared by every policy; else the old guard's
        if (
            backend is None
            and old is not None
            and old.policy.upstream.backend_config() == (policy.upstream.backend_config())
        ):
            backend = old.backend
        guard = Guard.from_policy(
            policy,
            backend=backend,
            store=store,
            max_session_messages=args.max_session_messages,
            replaces=old,
        )
        if warm:  # the first requests cost what later ones do
            guard.warm()
        return guard

    if files:
        policies = ServedPolicies.from_files(files, build, namespaced=namespaced)
    else:
        policies = ServedPolicies.single(build(default_policy(), None), "smalltalk")
    app = create_app(
        policies,
        keys=keys,
        admin_key_hash=admin,
        limits=limits,
        policy_keys=policy_keys(args.policy_key, policies, keys.enabled),
        shared_dir=getattr(args, "worker_dir", None),
        worker=worker,
    )
    console.print(
        f"governor serve: store {store_label(args.store, store)};"
        f" client keys {'required' if keys.enabled else 'not required'}",
        markup=False,
        soft_wrap=True,
    )
    for served in policies:
        policy, up = served.guard.policy, served.guard.policy.upstream
        upstream = f"{up.model} at {up.base_url}" if local is None else f"{local.name} in-process"
        console.print(
            f"  {served.model}: {policy.source} in front of {upstream}",
            markup=False,
            soft_wrap=True,
        )
        if local is None and up.api_key_env and not os.environ.get(up.api_key_env):
            console.print(
                f"  warning: {served.model}: upstream.api_key_env names ${up.api_key_env},"
                " which is not set: requests go to the upstream without an API key",
                markup=False,
                soft_wrap=True,
            )
    limited = [
        flag
        for flag, value in (
            ("--rate-limit", args.rate_limit),
            ("--session-quota", args.session_quota),
        )
        if value is not None
    ]
    if limited and not keys.enabled:
        console.print(
            f"  warning: {' and '.join(limited)} without client keys: every client spends from"
            " one shared budget, so one client can use up everyone's (give each client a key:"
            " --api-key-hash)",
            markup=False,
            soft_wrap=True,
        )
    workers = f" ({args.workers} worker processes)" if args.workers > 1 else ""
    console.print(f"listening on http://{args.host}:{args.port}/v1{workers}", markup=False)
    return app


def policy_keys(specs: list[str], policies: Any, keyed: bool) -> dict[str, list[str]]:
    """The client keys' digests each policy of ``--policy-key NAME=SHA256`` is served to."""
    pinned: dict[str, list[str]] = {}
    served = {s.name for s in policies}
    for spec in specs:
        name, sep, digest = spec.partition("=")
        if not sep or name not in served:
            wanted = f"NAME=SHA256 naming a served policy ({', '.join(sorted(served))})"
            raise ConfigError(f"--policy-key: {expected(wanted, spec)}")
        pinned.setdefault(name, []).append(digest)
    if pinned and not keyed:
        raise ConfigError(
            "--policy-key: expected client keys (--api-key-hash or"
            " $GOVERNOR_API_KEY_HASHES_FILE), found none"
        )
    return pinned


def local_upstream(args: argparse.Namespace) -> Backend | None:
    """The in-process model of ``--model-path`` behind its generation worker (one generation at
    a time, each cut at the step's deadline or at the worker's ``timeout_s``); None without it."""
    if args.model_path is None:
        return None
    if args.upstream is not None or args.model is not None:
        raise ConfigError(
            "--model-path: expected it alone as the upstream, found --upstream or --model too"
        )
    from governor.backends.local_worker import served_backend

    return served_backend(args.model_path)


def _tagged(app: Any, index: int) -> Any:
    """``app`` with the header ``X-Governor-Worker: index`` on every HTTP answer."""
    header = (b"x-governor-worker", str(index).encode("ascii"))

    async def tagged(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        await app(scope, receive, send_tagged)

    return tagged
