"""OpenAIBackend against a live fake server on 127.0.0.1: requests, parsing, errors, retries."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import numpy as np
import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer, Reply

from governor.backends import Message, OpenAIBackend, TokenLogprob
from governor.config import BackendConfig
from governor.errors import (
    BackendHTTPError,
    BackendResponseError,
    BackendTimeout,
    BackendUnavailable,
)
from governor.usage import metered

MakeBackend = Callable[..., OpenAIBackend]
CHAT = "/chat/completions"


def test_chat_sends_the_request_and_parses_choices_in_index_order(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    backend = make_backend()
    messages = [Message("system", "be brief"), Message("user", "hi")]
    with metered() as meter:
        result = backend.chat(messages, n=3, temperature=0.7, max_tokens=20, stop=["\n"])
    [request] = server.requests_to(CHAT)
    assert request.method == "POST"
    assert request.body == {
        "model": "fake-model",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ],
        "n": 3,
        "temperature": 0.7,
        "max_tokens": 20,
        "stop": ["\n"],
    }
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert [c.text for c in result.completions] == ["answer 0", "answer 1", "answer 2"]
    assert all(c.finish_reason == "stop" and c.logprobs is None for c in result.completions)
    assert (result.usage.calls, result.usage.prompt_tokens, result.usage.completion_tokens) == (
        1,
        7,
        6,
    )
    assert result.model == "fake-model"
    assert backend.name == "openai:fake-model"
    assert (meter.total.calls, meter.total.tokens) == (1, 13)


def test_logprobs_are_requested_and_parsed(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    result = make_backend().chat("hi", n=2, top_logprobs=2)
    body = server.requests_to(CHAT)[0].body
    assert (body["logprobs"], body["top_logprobs"]) == (True, 2)
    assert "stop" not in body
    alternatives = (("alt0", -1.0), ("alt1", -2.0))
    assert result.completions[1].logprobs == (
        TokenLogprob("answer", -0.5, alternatives),
        TokenLogprob(" 1", -0.25, alternatives),
    )


def test_logprobs_without_alternatives_and_no_key(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    result = make_backend(api_key=None).chat("hi", logprobs=True)
    request = server.requests_to(CHAT)[0]
    assert request.body["logprobs"] is True and "top_logprobs" not in request.body
    assert "Authorization" not in request.headers
    assert result.completions[0].logprobs is not None
    assert result.completions[0].logprobs[0].top == ()


def test_missing_usage_counts_zero_tokens(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, Reply(body={"choices": [{"message": {"content": "ok"}}]}))
    result = make_backend().chat("hi")
    assert result.text == "ok" and result.completions[0].finish_reason is None
    assert (result.usage.calls, result.usage.tokens) == (1, 0)


def test_embeddings_are_ordered_by_index(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    with metered() as meter:
        vectors = make_backend().embed(["a", "bbb", "cc"])
    assert server.requests_to("/embeddings")[0].body == {
        "model": "fake-model",
        "input": ["a", "bbb", "cc"],
    }
    assert vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors, [[0, 1, 1], [1, 3, 1], [2, 2, 1]])
    assert (meter.total.calls, meter.total.prompt_tokens) == (1, 3)


def test_embeddings_of_the_wrong_count_are_rejected(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script("/embeddings", Reply(body={"data": [{"index": 0, "embedding": [1.0]}]}))
    with pytest.raises(BackendResponseError, match="2 embeddings"):
        make_backend().embed(["a", "b"])


@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ("<html>502 bad gateway</html>", r"expected a JSON body, found '<html>502"),
        ({"id": "x", "object": "chat.completion"}, r"non-empty list 'choices'.*keys: id, object"),
        ({"choices": [{"message": {"content": None}}]}, r"choices\[0\]\.message\.content"),
        ({"choices": [{"message": {"content": "x"}, "logprobs": {"content": [{}]}}]}, "logprobs"),
        ([1, 2], "expected a JSON object, found 'list'"),
    ],
)
def test_unusable_answers_raise_response_errors_without_retry(
    server: FakeOpenAIServer, make_backend: MakeBackend, body: object, pattern: str
) -> None:
    server.script(CHAT, Reply(body=body))
    with metered() as meter, pytest.raises(BackendResponseError, match=pattern) as info:
        make_backend().chat("hi", logprobs=True)
    assert len(server.requests) == 1
    assert info.value.requests == 1  # type: ignore[attr-defined]
    assert meter.total.calls == 1


def test_a_server_error_is_retried_and_both_requests_are_counted(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, Reply(500, {"error": {"message": "overloaded"}}))
    with metered() as meter:
        result = make_backend().chat("hi")
    assert result.text == "answer 0"
    assert result.usage.calls == 2 and meter.total.calls == 2
    assert len(server.requests_to(CHAT)) == 2


def test_persistent_server_errors_give_up_after_max_retries(
    server: FakeOpenAIServer, make_backend: MakeBackend, caplog: pytest.LogCaptureFixture
) -> None:
    echoed = {"error": {"message": f"overloaded (key {API_KEY})"}}
    server.script(CHAT, *[Reply(500, echoed)] * 5)
    backend = make_backend(max_retries=2, backoff_s=0.01)
    delays: list[float] = []
    backend._sleep = delays.append
    caplog.set_level("DEBUG")
    with metered() as meter, pytest.raises(BackendHTTPError, match="HTTP 500: overloaded") as info:
        backend.chat("hi")
    assert info.value.status == 500
    assert info.value.requests == 3  # type: ignore[attr-defined]
    assert meter.total.calls == 3 and len(server.requests) == 3
    assert delays == [0.01, 0.02]
    assert "retry 2" in caplog.text
    assert API_KEY not in caplog.text and API_KEY not in str(info.value)


def test_garbage_after_a_retry_counts_both_requests(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, Reply(503, ""), Reply(200, "not json"))
    with metered() as meter, pytest.raises(BackendResponseError, match="'not json'") as info:
        make_backend().chat("hi")
    assert info.value.requests == 2  # type: ignore[attr-defined]
    assert meter.total.calls == 2


def test_client_errors_are_not_retried(server: FakeOpenAIServer, make_backend: MakeBackend) -> None:
    server.script(CHAT, Reply(400, {"error": {"message": "unknown model 'x'"}}))
    with pytest.raises(BackendHTTPError, match="HTTP 400: unknown model 'x'") as info:
        make_backend().chat("hi")
    assert info.value.status == 400 and not info.value.retryable
    assert len(server.requests) == 1


@pytest.mark.parametrize(("header", "delay"), [("3", 3.0), ("120", 10.0), ("soon", 0.25)])
def test_rate_limits_honour_retry_after_up_to_a_cap(
    server: FakeOpenAIServer, make_backend: MakeBackend, header: str, delay: float
) -> None:
    server.script(CHAT, Reply(429, "slow down", {"Retry-After": header}))
    backend = make_backend(backoff_s=0.25, deadline_s=60.0)
    delays: list[float] = []
    backend._sleep = delays.append
    assert backend.chat("hi").usage.calls == 2
    assert delays == [delay]


def test_a_slow_answer_times_out(server: FakeOpenAIServer, make_backend: MakeBackend) -> None:
    server.script(CHAT, Reply(delay_s=0.6))
    backend = make_backend(timeout_s=0.2, max_retries=0)
    start = time.perf_counter()
    with metered() as meter, pytest.raises(BackendTimeout, match=r"no answer from .* within 0.2 s"):
        backend.chat("hi")
    assert time.perf_counter() - start < 0.55
    assert meter.total.calls == 1


def test_a_timeout_is_retried(server: FakeOpenAIServer, make_backend: MakeBackend) -> None:
    server.script(CHAT, Reply(delay_s=0.6))
    result = make_backend(timeout_s=0.2, max_retries=1, deadline_s=5.0).chat("hi")
    assert result.text == "answer 0" and result.usage.calls == 2


def test_a_refused_connection_is_unavailable(closed_port_url: str) -> None:
    config = BackendConfig(closed_port_url, "m", API_KEY, max_retries=1, backoff_s=0.0)
    with OpenAIBackend(config) as backend, metered() as meter:
        with pytest.raises(BackendUnavailable, match=r"cannot reach http://127\.0\.0\.1") as info:
            backend.chat("hi")
        with pytest.raises(BackendUnavailable):
            backend.check()
    assert info.value.requests == 2  # type: ignore[attr-defined]
    assert meter.total.calls == 2  # check() is not an LLM call
    assert API_KEY not in str(info.value) and API_KEY not in repr(backend)


def test_check_accepts_any_answer_and_makes_no_llm_call(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script("/models", Reply(404, "not found"))
    backend = make_backend()
    with metered() as meter:
        backend.check()
        backend.check()
    assert meter.total.calls == 0
    assert [r.path for r in server.requests] == ["/v1/models", "/v1/models"]
    assert server.requests[0].method == "GET"


def test_check_reports_a_rejected_key_without_showing_it(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    echoed = {"error": {"message": f"Incorrect API key provided: {API_KEY}"}}
    server.script("/models", Reply(401, echoed))
    backend = make_backend()
    with pytest.raises(BackendHTTPError, match="API key was rejected") as info:
        backend.check()
    assert info.value.status == 401
    assert API_KEY not in str(info.value) and "Incorrect API key provided: ***" in str(info.value)
    assert API_KEY not in repr(backend) and "api_key=set" in repr(backend)


def test_check_without_a_key_says_one_is_needed(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script("/models", Reply(403, {"error": "forbidden"}))
    with pytest.raises(BackendHTTPError, match=r"an API key is needed .*HTTP 403\): forbidden"):
        make_backend(api_key=None).check()


def test_a_mock_transport_replaces_the_network() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("too slow", request=request)

    config = BackendConfig("http://model.invalid/v1", "m", max_retries=0)
    backend = OpenAIBackend(config, transport=httpx.MockTransport(handle))
    with backend, pytest.raises(BackendTimeout, match=r"model\.invalid/v1/chat/completions"):
        backend.chat("hi")
    assert backend._client.is_closed
