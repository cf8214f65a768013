"""``governor serve --model-path``: a local transformers model in-process as the upstream, on its
generation worker (a tiny random Llama here; the real model in tests/model/test_serve_model.py).

The deadline tests slow the model's forward pass down (and keep it from ending its reply), so a
generation would run for seconds: the service must answer with the fallback at the step's time
budget, and the worker must be free for the next request right after.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from rich.console import Console
from stream_helpers import read_events
from tiny_llama import EOS, save_tiny_llama

from governor.backends import Message
from governor.backends.local_worker import WorkerBackend
from governor.cli import build_parser, main
from governor.cli.serve import build_app
from governor.deadline import abandoned_stages
from governor.errors import BackendError, BackendTimeout, BackendUnavailable
from governor.serve.local import serving
from governor.usage import metered

pytestmark = pytest.mark.hf

FALLBACK = "Sorry, no answer in time."
BUDGET_S = 0.6
STEP_S = 0.05  # one slowed forward pass
SESSIONS = itertools.count()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def policy_file(tmp_path: Path, **observer: Any) -> Path:
    policy = {
        "upstream": {"temperature": 0, "max_tokens": 200, "timeout_s": 30},
        "observer": {"n_candidates": 1, "max_regenerations": 0, "time_budget_s": BUDGET_S, **observer},
        "overlays": "none",
        "fallbacks": {"default": FALLBACK},
    }  # fmt: skip
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(policy))
    return path


@pytest.fixture
def app(model_dir: Path, tmp_path: Path) -> Iterator[Any]:
    argv = ["serve", "--model-path", str(model_dir), "--policy", str(policy_file(tmp_path))]
    console = io.StringIO()
    made = build_app(build_parser().parse_args([*argv, "--store", "memory"]), Console(file=console))
    assert f"in front of hf:{model_dir.name} in-process" in console.getvalue()
    yield made
    made.state.service.guard.backend.close()


def worker_of(app: Any) -> WorkerBackend:
    backend = app.state.service.guard.backend
    assert isinstance(backend, WorkerBackend)
    return backend


class Slowed:
    """The model's forward pass, ``STEP_S`` slower, never choosing the end token; counted."""

    def __init__(self, worker: WorkerBackend) -> None:
        self.module = worker.model.model
        self.original = self.module.forward
        self.passes = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.passes += 1
        out = self.original(*args, **kwargs)
        out.logits[..., EOS] = float("-inf")
        time.sleep(STEP_S)
        return out

    def __enter__(self) -> Slowed:
        self.module.forward = self
        return self

    def __exit__(self, *exc: Any) -> None:
        del self.module.forward  # the class's forward again


def ask(base: str, text: str, **body: Any) -> dict[str, Any]:
    payload = {"model": "m", "messages": [{"role": "user", "content": text}], **body}
    headers = {"X-Governor-Session": f"s-{next(SESSIONS)}"}
    answer = httpx.post(f"{base}/v1/chat/completions", json=payload, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def wait_idle(worker: WorkerBackend, limit_s: float = 2.0) -> float:
    """Seconds until the worker runs nothing (fails past ``limit_s``)."""
    start = time.monotonic()
    while worker.busy or worker.waiting or abandoned_stages():
        assert time.monotonic() - start < limit_s, "the worker is still generating"
        time.sleep(0.01)
    return time.monotonic() - start


def test_the_service_answers_from_the_local_model_and_is_ready(app: Any) -> None:
    with serving(app) as base:
        ready = httpx.get(f"{base}/readyz").json()
        assert ready["ready"] and ready["upstream"] == {"ok": True, "error": None}
        body = ask(base, "the cat sat on the mat", max_tokens=4)
    governor = body["governor"]
    assert governor["kind"] == "execute" and not governor["fallback"]
    assert governor["llm"]["calls"] == 1 and governor["llm"]["failed"] == 0
    assert governor["llm"]["tokens"] >= 1 and body["choices"][0]["message"]["content"]
    assert worker_of(app).generations == 1 and worker_of(app).cancelled == 0


def test_a_slow_generation_is_cut_at_the_deadline_and_the_worker_is_free_again(app: Any) -> None:
    worker = worker_of(app)
    with serving(app) as base:
        with Slowed(worker) as slowed:
            start = time.monotonic()
            body = ask(base, "the dog ran")
            answered = time.monotonic() - start
            idle = wait_idle(worker)
        # without the cut: 200 tokens at STEP_S each, 10 s
        assert body["choices"][0]["message"]["content"] == FALLBACK
        governor = body["governor"]
        assert governor["fallback"] and governor["cause"] == "time_budget_exceeded"
        # one call: cut at the deadline (failed), or given up on a moment before (abandoned)
        llm = governor["llm"]
        assert llm["calls"] == 1 and llm["abandoned"] + llm["failed"] == 1
        assert answered < BUDGET_S + 1.0 and idle < 0.5
        assert slowed.passes < (BUDGET_S + 0.5) / STEP_S + 2
        assert worker.cancelled == 1 and not worker.busy
        # the next request is generated at once, by the same worker
        after = ask(base, "the cat sat", max_tokens=3)
    assert after["governor"]["kind"] == "execute" and after["governor"]["llm"]["calls"] == 1
    assert worker.generations == 2


def test_streaming_hands_on_the_tokens_as_generated(app: Any) -> None:
    with serving(app) as base:
        whole = ask(base, "a big red house", max_tokens=8)["choices"][0]["message"]["content"]
        payload = {
            "model": "m",
            "messages": [{"role": "user", "content": "a big red house"}],
            "max_tokens": 8,
            "stream": True,
        }
        headers = {"X-Governor-Session": "streamed"}
        raw = httpx.post(f"{base}/v1/chat/completions", json=payload, headers=headers).text
    texts, calls, summary, done = read_events(raw)
    assert done and not calls and summary is not None
    assert "".join(texts) == whole  # greedy: the streamed reply is the whole one
    assert summary["llm"]["calls"] == 1 and summary["kind"] == "execute"


def test_stream_chat_hands_each_token_on_and_a_refusing_reader_cancels(app: Any) -> None:
    worker = worker_of(app)
    pieces: list[str] = []
    ask = [Message("user", "a big red house")]
    with Slowed(worker), metered() as meter:
        completion = worker.stream_chat(
            ask, temperature=0, max_tokens=6, tools=None, on_delta=lambda t, _: pieces.append(t)
        )
    assert len(pieces) >= 2 and "".join(pieces) == completion.text
    assert meter.total.calls == 1 and meter.total.failed == 0

    def refuse(text: str, _: bool) -> None:
        raise RuntimeError("the reader stops here")

    with Slowed(worker) as slowed, metered() as meter:
        with pytest.raises(RuntimeError, match="the reader stops here"):
            worker.stream_chat(ask, temperature=0, max_tokens=200, tools=None, on_delta=refuse)
        wait_idle(worker)
    assert slowed.passes < 10  # cut at the next token, not the 200 asked for
    assert meter.total.calls == 1 and meter.total.failed == 0  # made, and read as far as wanted


def test_a_full_queue_refuses_at_once_and_readiness_says_busy(app: Any) -> None:
    worker = WorkerBackend(worker_of(app).model, queue_size=0, timeout_s=BUDGET_S)
    try:
        with Slowed(worker):
            first = threading.Thread(target=lambda: _swallow(worker), daemon=True)
            first.start()
            while not worker.busy:
                time.sleep(0.005)
            with pytest.raises(BackendUnavailable, match="busy"):
                worker.check()
            with metered() as meter, pytest.raises(BackendUnavailable, match="found it full"):
                worker.chat("the cat", max_tokens=2)
            assert meter.total.calls == 1 and meter.total.failed == 1
            first.join(5)
        wait_idle(worker)
        worker.check()  # free again: ready
    finally:
        worker.close()
    with pytest.raises(BackendUnavailable, match="stopped"):
        worker.check()


def test_a_prompt_past_the_bound_is_refused_before_any_pass(app: Any) -> None:
    worker = WorkerBackend(worker_of(app).model, max_prompt_tokens=8)
    try:
        with Slowed(worker) as slowed, metered() as meter:
            with pytest.raises(BackendError, match="expected a prompt of at most 8 tokens"):
                worker.chat("the cat sat on the mat under the big red tree", max_tokens=2)
            worker.chat("the cat", max_tokens=2)  # within it: answered
        assert slowed.passes == 2  # the refused prompt ran none
        assert meter.total.calls == 2 and meter.total.failed == 1
    finally:
        worker.close()


def _swallow(worker: WorkerBackend) -> None:
    with contextlib.suppress(BackendTimeout):  # cut at its timeout_s, as this test wants
        worker.chat("the dog ran", max_tokens=200)


def test_model_path_with_an_upstream_is_one_line_error(
    model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["serve", "--store", "memory", "--model-path", str(model_dir)]
    assert main([*argv, "--upstream", "http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert "--model-path: expected it alone as the upstream" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["serve", "--store", "memory", "--model-path", str(model_dir / "nothing")]) == 2
    err = capsys.readouterr().err
    assert "expected a folder with config.json and weights" in err
    assert len(err.strip().splitlines()) == 1
