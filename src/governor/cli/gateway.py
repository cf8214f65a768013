"""The ``governor mcp`` command: the MCP gateway (:mod:`governor.integrations.mcp_gateway`).

``governor mcp --policy P.yaml -- COMMAND ARGS...`` starts the MCP server ``COMMAND ARGS...`` and
serves the gateway over stdio (what an MCP client's configuration launches in place of the
server); ``--server-url URL`` reaches a streamable HTTP server instead; ``--http HOST:PORT`` serves
the gateway over streamable HTTP at ``/mcp`` instead of stdio. ``--store`` is where sessions are
kept (``memory``, the default, ``sqlite:PATH`` or ``postgres:DSN``); ``--session`` names the stdio
client's session (to continue it from the store). Over stdio nothing but MCP goes to stdout: the
command's own lines go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.errors import ConfigError, expected
from governor.guard.stores import store_from, store_label


def add_mcp_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``mcp`` command to ``subparsers``."""
    mcp = subparsers.add_parser(
        "mcp",
        help="an MCP gateway: judge every tools/call by a policy before it reaches the server",
        description="governor mcp --policy P.yaml -- COMMAND ARGS... (see docs/integrations.md)",
    )
    mcp.add_argument("--policy", type=Path, required=True, help="guard policy file")
    mcp.add_argument("--server-url", help="a streamable HTTP MCP server (instead of a command)")
    mcp.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve the gateway over streamable HTTP at http://HOST:PORT/mcp (default: stdio)",
    )
    mcp.add_argument(
        "--store",
        default="memory",
        help="memory, sqlite:PATH or postgres:DSN (default: %(default)s)",
    )
    mcp.add_argument("--session", help="the stdio client's session id (default: a fresh one)")
    mcp.add_argument("server", nargs=argparse.REMAINDER, help="-- COMMAND ARGS... of the server")
    mcp.set_defaults(handler=mcp_command)
    return mcp


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http: {expected('HOST:PORT (a port in [0, 65535])', value)}")
    return host, int(port)


def mcp_command(args: argparse.Namespace, console: Console) -> int:
    try:
        from governor.integrations.mcp_gateway import serve_http, serve_stdio, upstream_from
        from governor.integrations.tool_judge import judging_guard
    except ImportError as exc:
        raise ConfigError(
            f"mcp: expected the [mcp] extra (pip install -e '.[mcp]'), found {exc}"
        ) from None
    server = upstream_from(args.server, args.server_url)
    where = None if args.http is None else _host_port(args.http)
    store = store_from(args.store)
    guard = judging_guard(args.policy, store=store)
    say = Console(file=sys.stderr, width=120, emoji=False)  # stdout is the MCP channel
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="governor mcp: %(message)s")
    served = "stdio" if where is None else f"http://{where[0]}:{where[1]}/mcp"
    say.print(
        f"governor mcp: {guard.policy.source} in front of {server.label}; serving {served};"
        f" store {store_label(args.store, store)}",
        markup=False,
        soft_wrap=True,
    )
    try:
        if where is None:
            asyncio.run(serve_stdio(guard, server, session_id=args.session))
        else:
            asyncio.run(serve_http(guard, server, host=where[0], port=where[1]))
    finally:
        guard.close()
    return 0
