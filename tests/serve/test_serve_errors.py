"""Bad input, keys and failures: a 4xx/5xx in the OpenAI error format, never a traceback."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any, ClassVar

import httpx
import pytest
from guard_helpers import TOOLS_POLICY
from starlette.requests import ClientDisconnect, Request

from governor.backends.scripted import ScriptedBackend
from governor.guard import Guard, MemoryStore, StoreError, load_policy
from governor.serve import KeyChecker, create_app, load_key_hashes
from governor.serve.api_errors import ApiError
from governor.serve.local import serving
from governor.serve.schema import read_body

HI = [{"role": "user", "content": "hi"}]
KEY = "gk-client-key-1"


Maker = Callable[..., tuple[httpx.Client, Guard]]


@pytest.fixture
def make_client() -> Iterator[Maker]:
    """Serve a guard of the tool policy over a scripted upstream; a client for it."""
    with ExitStack() as stack:

        def make(keys: KeyChecker | None = None, **kwargs: Any) -> tuple[httpx.Client, Guard]:
            backend = ScriptedBackend(["Hello."] * 20)
            guard = Guard.from_policy(load_policy(TOOLS_POLICY), backend=backend, **kwargs)
            app = create_app(guard, keys=keys, max_body_bytes=10_000)
            base = stack.enter_context(serving(app))
            return stack.enter_context(httpx.Client(base_url=base)), guard

        yield make


def assert_error(response: Any, status: int, code: str | None = None, says: str = "") -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert code is None or error["code"] == code
    assert says in error["message"] and "Traceback" not in response.text


def test_malformed_json_and_a_body_that_is_not_an_object(make_client: Maker) -> None:
    c, _ = make_client()
    bad = c.post("/v1/chat/completions", content=b"{not json", headers={"X-Governor-Session": "s"})
    assert_error(bad, 400, "invalid_json", "malformed JSON")
    assert_error(c.post("/v1/chat/completions", json=[1, 2]), 400, "invalid_json", "JSON object")


@pytest.mark.parametrize(
    ("raw", "twice"),
    [
        (b'{"model": "a", "messages": [{"role": "user", "content": "hi"}], "model": "b"}', "model"),
        (b'{"messages": [{"role": "user", "content": "hi", "role": "system"}]}', "role"),
        (
            b'{"messages": [{"role": "user", "content": "hi"}], "metadata": {"session_id": "a",'
            b' "session_id": "b"}}',
            "session_id",
        ),
    ],
    ids=["top level", "in a message", "in the metadata"],
)
def test_a_key_named_twice_in_any_object_is_refused(
    make_client: Maker, raw: bytes, twice: str
) -> None:
    """Readers disagree on which of two values counts: a proxy and the service could read one
    request two ways (a role, a model, a session), so neither is taken; no session is opened."""
    c, guard = make_client()
    r = c.post("/v1/chat/completions", content=raw, headers={"X-Governor-Session": "s"})
    says = f"expected each key once in a JSON object, found '{twice}' twice"
    assert_error(r, 400, "invalid_json", says)
    assert guard.cached() == 0
    assert_error(c.post("/v1/checks", content=raw), 400, "invalid_json", "each key once")


def test_a_key_named_twice_beside_deep_nesting_is_refused(make_client: Maker) -> None:
    """Nesting the fast reader accepts (at most 1,024 levels) but the second, key-checking read
    cannot follow (the interpreter's recursion limit) must not let a key named twice through."""
    c, guard = make_client()
    deep = b"[" * 1020 + b"]" * 1020
    raw = b'{"model": "a", "messages": [{"role": "user", "content": "hi"}], "model": "b", "x": '
    raw += deep + b"}"
    r = c.post("/v1/chat/completions", content=raw, headers={"X-Governor-Session": "s"})
    assert_error(r, 400, "invalid_json", "expected")
    assert guard.cached() == 0


@pytest.mark.parametrize(
    "raw",
    [b'{"messages": "\xff\xfe"}', b'{"messages": ' + b"[" * 3000 + b"]" * 3000 + b"}"],
    ids=["not UTF-8", "nested too deeply"],
)
def test_bytes_that_are_not_utf8_and_deep_nesting_are_malformed_json(
    make_client: Maker, raw: bytes
) -> None:
    c, _ = make_client()
    r = c.post("/v1/chat/completions", content=raw, headers={"X-Governor-Session": "s"})
    assert_error(r, 400, "invalid_json", "malformed JSON")
    r = c.post("/v1/checks", content=raw)
    assert_error(r, 400, "invalid_json", "malformed JSON")


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        ({"messages": "hi"}, "messages", "expected a list of messages, found 'hi'"),
        ({"messages": []}, "messages", "non-empty"),
        ({"messages": HI, "n": 9}, "n", "an integer in [1, 8], found 9"),
        ({"messages": HI, "n": 2, "stream": True}, "n", "a stream serves one choice"),
        ({"messages": HI, "temperature": "hot"}, "temperature", "found 'hot'"),
        ({"messages": HI, "max_tokens": 0}, "max_tokens", "integer >= 1"),
        ({"messages": HI, "stream": "yes"}, "stream", "true or false"),
        ({"messages": HI, "tools": {}}, "tools", "list of tool schemas"),
        ({"messages": HI, "model": 3}, "model", "a model name"),
    ],
)
def test_wrong_types_name_the_field(
    make_client: Maker, body: dict[str, Any], param: str, says: str
) -> None:
    c, _ = make_client()
    r = c.post("/v1/chat/completions", json={"metadata": {"governor_session": "s"}, **body})
    assert_error(r, 400, None, says)
    assert r.json()["error"]["param"] == param


def test_a_bad_message_and_a_changed_history_are_400s(make_client: Maker) -> None:
    c, _ = make_client()
    r = c.post(
        "/v1/chat/completions",
        json={"metadata": {"governor_session": "s"}, "messages": [{"role": "robot"}]},
    )
    assert_error(r, 400, None, "messages[0].role")
    assert (
        c.post(
            "/v1/chat/completions", json={"metadata": {"governor_session": "s"}, "messages": HI}
        ).status_code
        == 200
    )
    changed = [{"role": "user", "content": "something else"}]
    r = c.post(
        "/v1/chat/completions", json={"metadata": {"governor_session": "s"}, "messages": changed}
    )
    assert_error(r, 400, None, "cannot change")


def test_a_chat_without_a_session_opens_one_and_a_check_without_one_is_refused(
    make_client: Maker,
) -> None:
    c, _ = make_client()
    r = c.post("/v1/chat/completions", json={"messages": HI, "user": "ann"})
    assert r.status_code == 200, r.text
    opened = r.headers["X-Governor-Session"]
    assert opened.startswith("gs-") and r.json()["governor"]["session"] == opened
    again = c.post("/v1/chat/completions", json={"messages": HI, "user": "ann"})
    assert again.headers["X-Governor-Session"] != opened  # user is not a session
    odd = {"session_id": "naïve\r\nX-Evil: 1 ✓"}  # control characters: no session's id
    r = c.post("/v1/chat/completions", json={"messages": HI, "metadata": odd})
    assert_error(r, 400, None, "session id")
    assert "X-Evil" not in r.headers and "X-Governor-Session" not in r.headers
    wide = {"session_id": "naïve ✓"}  # printable, but no header can carry it: none is written
    r = c.post("/v1/chat/completions", json={"messages": HI, "metadata": wide})
    assert r.status_code == 200 and "X-Governor-Session" not in r.headers
    assert r.json()["governor"]["session"] == wide["session_id"]
    bad = c.post("/v1/chat/completions", json={"messages": HI, "metadata": {"session_id": 3}})
    assert_error(bad, 400, None, "metadata.session_id")
    assert_error(c.post("/v1/checks", json={"candidate": "x"}), 400, "missing_session")
    assert_error(c.post("/v1/checks", json={"session": "s", "candidate": 3}), 400, "invalid_type")
    too_long = c.post(
        "/v1/chat/completions", json={"messages": HI, "metadata": {"governor_session": "u" * 201}}
    )
    assert_error(too_long, 400, None, "session id: expected printable text of 1 to 200")
    longest = {"governor_session": "u" * 200}
    assert c.post("/v1/chat/completions", json={"messages": HI, "metadata": longest}).is_success


def test_a_huge_body_is_refused_before_it_is_parsed(make_client: Maker) -> None:
    c, _ = make_client()
    huge = b'{"messages": "' + b"x" * 20_000 + b'"}'
    r = c.post("/v1/chat/completions", content=huge, headers={"X-Governor-Session": "s"})
    assert_error(r, 413, "body_too_large", "at most 10000 bytes")

    def chunks() -> Any:  # no Content-Length: counted as it arrives
        for _ in range(30):
            yield b" " * 1000

    r = c.post("/v1/chat/completions", content=chunks(), headers={"X-Governor-Session": "s"})
    assert_error(r, 413, "body_too_large")


def test_unknown_routes_and_methods(make_client: Maker) -> None:
    c, _ = make_client()
    assert_error(c.get("/v1/nothing"), 404, "unknown_route", "GET /v1/nothing")
    r = c.get("/v1/chat/completions")
    assert_error(r, 405, "method_not_allowed", "expected method POST")


def test_client_keys_are_checked_against_their_digests(make_client: Maker, tmp_path: Any) -> None:
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text(f"# clients\n{hashlib.sha256(KEY.encode()).hexdigest()}\n\n")
    c, _ = make_client(KeyChecker(load_key_hashes(keys_file)))
    body = {"metadata": {"governor_session": "s"}, "messages": HI}
    assert_error(c.post("/v1/chat/completions", json=body), 401, "invalid_api_key", "Bearer")
    wrong = c.post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer nope"})
    assert_error(wrong, 401, "invalid_api_key", "not accepted")
    assert "nope" not in wrong.text
    right = c.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}"})
    assert right.status_code == 200
    assert c.get("/healthz").status_code == 200  # the probes ask for no key


def test_a_bad_digest_file_names_the_line(tmp_path: Any) -> None:
    from governor.errors import ConfigError

    bad = tmp_path / "keys.txt"
    bad.write_text("abc\n")
    with pytest.raises(ConfigError, match=r"keys.txt:1: expected a sha256 hex digest"):
        load_key_hashes(bad)


def test_an_unexpected_exception_is_a_500_without_details(
    make_client: Maker, monkeypatch: Any
) -> None:
    c, guard = make_client()

    def boom(session_id: str) -> Any:
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr(guard, "session", boom)
    r = c.post("/v1/chat/completions", json={"metadata": {"governor_session": "s"}, "messages": HI})
    assert_error(r, 500, "internal_error")
    assert "boom" not in r.text


class BrokenStore(MemoryStore):
    def load(self, session_id: str) -> Mapping[str, Any] | None:
        raise StoreError("disk gone")

    def save(self, session_id: str, state: Mapping[str, Any], record: Any, **more: Any) -> None:
        raise StoreError("disk gone")

    def probe(self) -> None:
        raise StoreError("disk gone")


class ProbelessStore(BrokenStore):
    """A store of its user's without a probe: readiness falls back to a save."""

    probe = None  # type: ignore[assignment]


@pytest.mark.parametrize("store", [BrokenStore, ProbelessStore])
def test_a_store_that_cannot_be_read_is_a_503_and_not_ready(
    make_client: Maker, store: type[MemoryStore]
) -> None:
    c, _ = make_client(store=store())
    r = c.post("/v1/chat/completions", json={"metadata": {"governor_session": "s"}, "messages": HI})
    assert_error(r, 503, "unavailable", "session store")
    ready = c.get("/readyz")
    assert ready.status_code == 503 and ready.json()["store"]["ok"] is False
    assert ready.json()["upstream"]["ok"] is True


class _PassThrough:
    """A middleware that changes nothing: with it, every request takes Starlette's whole way."""

    paths: ClassVar[list[str]] = []
    """The paths of the HTTP requests it saw."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            _PassThrough.paths.append(scope["path"])
        await self.app(scope, receive, send)


def _answers(app: Any) -> list[tuple[int, list[tuple[str, str]], Any]]:
    """Each request's status, headers and JSON body (the reply's id and time left out)."""
    sent = [
        ("POST", "/v1/chat/completions", {"json": {"messages": HI}}),
        ("POST", "/v1/chat/completions", {"content": b"{not json"}),
        ("POST", "/v1/chat/completions", {"content": b'{"messages": [], "messages": []}'}),
        ("POST", "/v1/chat/completions", {"json": {"messages": "hi"}}),
        ("POST", "/v1/chat/completions", {"content": b'{"messages": "' + b"x" * 20_000 + b'"}'}),
        ("GET", "/v1/chat/completions", {}),
        ("POST", "/v1/chat/completions/", {"json": {"messages": HI}}),
    ]
    out = []
    with serving(app) as base, httpx.Client(base_url=base, follow_redirects=False) as c:
        for method, path, kwargs in sent:
            r = c.request(method, path, headers={"X-Governor-Session": "s"}, **kwargs)
            body = r.json() if r.headers.get("content-type") == "application/json" else r.text
            if isinstance(body, dict) and "id" in body:
                body = {k: v for k, v in body.items() if k not in ("id", "created", "governor")}
            varies = ("date", "location", "content-length")  # (a reply's length: its latencies)
            headers = sorted((k, v) for k, v in r.headers.items() if k not in varies)
            out.append((r.status_code, headers, body))
    return out


def test_chat_requests_get_the_same_answers_with_middleware_as_without() -> None:
    """``POST /v1/chat/completions`` skips Starlette's layers only while no middleware was added:
    its answers (a reply, each error) are the ones Starlette's whole way gives, and a
    middleware added to the app sees every request."""

    def app(middleware: bool) -> Any:
        backend = ScriptedBackend(["Hello."] * 20)
        made = create_app(Guard.from_policy(load_policy(TOOLS_POLICY), backend=backend))
        made.state.service.max_body_bytes = 10_000
        if middleware:
            made.add_middleware(_PassThrough)
        return made

    _PassThrough.paths.clear()
    direct = _answers(app(False))
    assert _PassThrough.paths == []
    whole = _answers(app(True))
    assert len(_PassThrough.paths) == len(whole)
    assert direct == whole
    statuses = [status for status, _, _ in direct]
    assert statuses == [200, 400, 400, 400, 413, 405, 307]


def _request(messages: list[dict[str, Any]], wait: float = 0.0) -> Request:
    """A request whose body arrives as these ASGI messages, each after ``wait`` seconds."""
    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(wait)
        if not queue:
            await asyncio.sleep(3600)
        return queue.pop(0)

    return Request(scope, receive)


def _part(body: bytes, more: bool) -> dict[str, Any]:
    return {"type": "http.request", "body": body, "more_body": more}


def test_a_body_is_read_in_its_parts_up_to_its_limit_and_in_its_time() -> None:
    parts = [_part(b'{"a"', True), _part(b"", True), _part(b": 1}", False)]
    assert asyncio.run(read_body(_request(parts), 100, 5.0)) == b'{"a": 1}'
    with pytest.raises(ApiError) as big:
        asyncio.run(read_body(_request(parts), 5, 5.0))
    assert big.value.status == 413
    with pytest.raises(ApiError) as slow:  # the last part never comes
        asyncio.run(read_body(_request(parts[:2], wait=0.01), 100, 0.1))
    assert slow.value.status == 408 and "within 0.1 s" in str(slow.value)
    with pytest.raises(ClientDisconnect):
        asyncio.run(read_body(_request([_part(b"{", True), {"type": "http.disconnect"}]), 100))


def test_a_read_cancelled_from_elsewhere_stays_cancelled_and_leaves_no_timer() -> None:
    """Only the deadline's own cancellation is a 408: the caller's goes on as a cancellation
    (before or after the deadline would have come), and a finished read's timer never fires."""

    async def main() -> tuple[bool, int]:
        reading = asyncio.create_task(read_body(_request([], wait=0.0), 100, 0.05))
        await asyncio.sleep(0.01)
        reading.cancel()
        try:
            await reading
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        done = await read_body(_request([_part(b"x", False)]), 100, 0.02)
        await asyncio.sleep(0.05)  # past that read's deadline: nothing is cancelled
        return cancelled, len(done)

    assert asyncio.run(main()) == (True, 1)
