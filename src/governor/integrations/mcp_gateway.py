"""An MCP gateway: governor between an MCP client and an MCP server (``governor mcp``).

The gateway is an MCP server to its client (over stdio, or streamable HTTP at ``/mcp``) and an
MCP client of the real server (a command it starts over stdio, or a streamable HTTP URL), both
through the ``mcp`` SDK (the ``[mcp]`` extra). What it does:

- ``tools/list`` passes through, less the tools the policy's ``tools`` section does not allow;
- every ``tools/call`` is judged before it reaches the server (:class:`~.tool_judge.ToolJudge`:
  the policy's rules over the session's calls and results so far, then the call committed):
  a refused call answers an MCP tool error (``isError``) whose text names the rules that refused
  it, with governor's decision in the result's ``_meta.governor``, and the server never sees it;
  an allowed call is forwarded, and its result is passed back and added to the session;
- a session is the MCP session: over HTTP the ``mcp-session-id`` the transport gave the client,
  over stdio the one client of the process (``session_id``, by default a fresh id per start; name
  one to continue a trajectory kept in a shared store). State lives in the guard's store.

Only tools are proxied (no resources, prompts or sampling). The guard behind the gateway has no
model (:class:`~.tool_judge.JudgeOnly`): a rule policy makes no model call. Imports the ``mcp``
SDK, the guard's facade and :mod:`.tool_judge`; ``starlette`` and ``uvicorn`` for the HTTP form.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import NotificationOptions, Server

from governor.errors import ConfigError, expected
from governor.guard import Guard
from governor.integrations.tool_judge import MAX_RESULT_CHARS, Judgement, Judges

log = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"
SESSION_PREFIX = "mcp:"


@dataclass(frozen=True)
class UpstreamServer:
    """The MCP server behind the gateway: a command started over stdio, or a streamable HTTP
    URL."""

    command: tuple[str, ...] = ()
    url: str | None = None

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ConfigError(f"MCP server: {expected('a command or a URL, not both', self.label)}")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"MCP server URL: {expected('an http(s) URL', self.url)}")

    @property
    def label(self) -> str:
        return self.url or " ".join(self.command) or "nothing"

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
        """An initialised client session with the server and what the server said it is (the
        server's process ends with the session)."""
        async with contextlib.AsyncExitStack() as stack:
            if self.url is not None:
                read, write, _ = await stack.enter_async_context(streamable_http_client(self.url))
            else:
                params = StdioServerParameters(
                    command=self.command[0], args=list(self.command[1:]), env=dict(os.environ)
                )
                read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            yield session, await session.initialize()


def result_text(result: types.CallToolResult) -> str:
    """What a tool result says, as text for the session's conversation (at most
    :data:`~.tool_judge.MAX_RESULT_CHARS` characters are read from each piece)."""
    parts: list[str] = []
    size = 0
    for block in result.content:
        piece = block.text if isinstance(block, types.TextContent) else f"[{block.type}]"
        parts.append(piece[:MAX_RESULT_CHARS])
        size += len(parts[-1])
        if size > MAX_RESULT_CHARS:
            break
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent)[:MAX_RESULT_CHARS])
    text = "\n".join(parts)
    return f"error: {text}" if result.isError else text


def refused_result(judgement: Judgement) -> types.CallToolResult:
    """The MCP tool error of a refused call: its text names the rules; ``_meta.governor`` holds
    the decision."""
    decision = {
        "allowed": False,
        "tool": judgement.tool,
        "rules": list(judgement.rules),
        "check": dict(judgement.summary),
    }
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=judgement.message)],
        isError=True,
        _meta={"governor": decision},
    )


class Gateway:
    """The gateway's MCP server over one guard and one connection to the real server."""

    def __init__(
        self,
        guard: Guard,
        upstream: ClientSession,
        *,
        name: str = "governor-mcp-gateway",
        instructions: str | None = None,
        session_id: Callable[[], str] | None = None,
    ) -> None:
        self.guard = guard
        self.upstream = upstream
        self.server: Server[Any, Any] = Server(name, instructions=instructions)
        self.server.request_handlers[types.ListToolsRequest] = self._list_tools
        self.server.request_handlers[types.CallToolRequest] = self._call_tool
        fixed = f"{SESSION_PREFIX}{uuid.uuid4().hex}"
        self._session_id = session_id or (lambda: fixed)
        self.judge = Judges(guard)
        """The judge of a session id."""

    def initialization_options(self) -> Any:
        return self.server.create_initialization_options(NotificationOptions(), {})

    def session_id(self) -> str:
        """The governor session of the request being handled: the MCP session id over HTTP;
        the gateway's own id over stdio."""
        request = self.server.request_context.request
        headers = getattr(request, "headers", None)
        if headers is None:
            return self._session_id()
        found = headers.get(SESSION_HEADER)
        if not found:
            raise ConfigError(f"MCP request: expected an {SESSION_HEADER} header, found none")
        return f"{SESSION_PREFIX}{found}"

    async def _list_tools(self, request: types.ListToolsRequest | None) -> types.ServerResult:
        cursor = None if request is None or request.params is None else request.params.cursor
        listed = await self.upstream.list_tools(cursor)
        tools = [t for t in listed.tools if self.guard.policy.tools.allows(t.name)]
        return types.ServerResult(types.ListToolsResult(tools=tools, nextCursor=listed.nextCursor))

    async def _call_tool(self, request: types.CallToolRequest) -> types.ServerResult:
        name, arguments = request.params.name, request.params.arguments or {}
        try:
            judge = self.judge(self.session_id())
        except ConfigError as exc:
            return types.ServerResult(
                types.CallToolResult(
                    content=[types.TextContent(type="text", text=f"governor refused: {exc}")],
                    isError=True,
                )
            )
        judgement = await judge.before_call(name, arguments)
        if not judgement.allowed:
            log.info("refused %s in %s: %s", name, judge.session.id, ", ".join(judgement.rules))
            return types.ServerResult(refused_result(judgement))
        try:
            # send_request, not call_tool: the client downstream validates the result against
            # the tool's output schema; validating it here too would cost some 8 ms of CPU per
            # call (jsonschema checks the schema each time) and turn a call that ran into an error
            params = types.CallToolRequestParams(name=name, arguments=arguments)
            request_out = types.ClientRequest(types.CallToolRequest(params=params))
            result = await self.upstream.send_request(request_out, types.CallToolResult)
        except Exception as exc:  # the call was judged and sent: record what came back
            log.warning("the MCP server failed on %s: %s: %s", name, type(exc).__name__, exc)
            await judge.after_call(judgement.call_id, f"error: the server failed: {exc}")
            text = f"the MCP server failed on {name}: {type(exc).__name__}: {exc}"
            return types.ServerResult(
                types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)], isError=True
                )
            )
        await judge.after_call(judgement.call_id, result_text(result))
        meta = {**(result.meta or {}), "governor": {"allowed": True, "tool": name}}
        return types.ServerResult(result.model_copy(update={"meta": meta}))


@contextlib.asynccontextmanager
async def gateway_to(
    guard: Guard, server: UpstreamServer, *, session_id: str | None = None
) -> AsyncIterator[Gateway]:
    """A gateway connected to ``server`` (disconnected, and the server's process ended, on
    exit); ``session_id``: the stdio client's session (default: a fresh one)."""
    async with server.connect() as (upstream, init):
        fixed = None if session_id is None else (lambda: session_id)
        yield Gateway(
            guard,
            upstream,
            name=f"governor gateway to {init.serverInfo.name}",
            instructions=init.instructions,
            session_id=fixed,
        )


async def serve_stdio(
    guard: Guard, server: UpstreamServer, *, session_id: str | None = None
) -> None:
    """Serve the gateway to one client over stdin and stdout until the client leaves."""
    from mcp.server.stdio import stdio_server

    async with (
        gateway_to(guard, server, session_id=session_id) as gateway,
        stdio_server() as (read, write),
    ):
        await gateway.server.run(read, write, gateway.initialization_options())


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def http_app(gateway: Gateway, *, host: str, path: str = "/mcp") -> Any:
    """A Starlette app serving ``gateway`` over streamable HTTP at ``path`` (each client its own
    MCP session, and so its own governor session). On a loopback ``host`` the SDK's DNS
    rebinding protection is on (only loopback Host and Origin headers), as FastMCP does: a web
    page the user visits cannot reach the gateway through the browser."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    security = None
    if host in LOOPBACK:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    manager = StreamableHTTPSessionManager(app=gateway.server, security_settings=security)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    class Endpoint:  # an ASGI app at exactly ``path`` (a Mount would redirect ``/mcp`` first)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    route = Route(path, endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])
    return Starlette(routes=[route], lifespan=lifespan)


async def serve_http(guard: Guard, server: UpstreamServer, *, host: str, port: int) -> None:
    """Serve the gateway over streamable HTTP at ``http://host:port/mcp`` until stopped. It asks
    no credentials: serve it on a loopback address, or behind a proxy that authenticates."""
    import uvicorn

    async with gateway_to(guard, server) as gateway:
        config = uvicorn.Config(
            http_app(gateway, host=host), host=host, port=port, log_level="info"
        )
        await uvicorn.Server(config).serve()


def upstream_from(command: Sequence[str], url: str | None) -> UpstreamServer:
    """The server of ``governor mcp``'s arguments (a leading ``--`` is dropped)."""
    given = list(command)
    if given[:1] == ["--"]:
        given = given[1:]
    return UpstreamServer(tuple(given), url)
