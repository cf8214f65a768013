"""An in-process model served to many callers: generation on one worker thread, cancelled at the
caller's deadline.

:class:`WorkerBackend` wraps an :class:`~governor.backends.hf.HFBackend` (the local model, or
any transformers folder) for a service whose requests arrive on many threads. Its generations
run one at a time on a dedicated thread; at most ``queue_size`` more wait, and a request past
that is refused at once (:class:`~governor.errors.BackendUnavailable`: the guard falls back).
Each generation has a deadline: the earliest of the timed stage it runs in
(:func:`governor.deadline.stage_deadline`, the step's time budget) and ``timeout_s`` from its
submission. The worker checks it between generated tokens and stops there; a generation whose
deadline passed while it waited is never started; the caller stops waiting at the deadline. So
a slow generation holds the worker at most one token past the deadline, and the step's fallback
is never held behind it. The prompt's own forward pass is the one thing that cannot be cut, so a
prompt longer than ``max_prompt_tokens`` is refused before it.

:meth:`WorkerBackend.stream_chat` streams: the worker decodes the new tokens as they come and the
caller's thread hands each new piece of text to ``on_delta`` (an exception there cancels the
generation). Every call is counted on the caller's thread, like any backend's: a cancelled or
refused generation is a failed call. :meth:`WorkerBackend.check` (the service's ``/readyz``)
fails when the worker has stopped or its queue is full. At exit, the workers still generating
are cancelled and joined, so no thread is inside a forward pass while the interpreter shuts
down. Imports the backend interface, the HF backend, the local model's loader, the deadline
module, the usage meter and the error tree.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from governor.backends.base import Backend, ChatRequest, ChatResult, Completion, Message, OnDelta
from governor.backends.hf import HFBackend
from governor.backends.local_model import local_backend
from governor.config import check_range
from governor.deadline import stage_deadline
from governor.errors import BackendError, BackendTimeout, BackendUnavailable
from governor.usage import Usage, llm_call_running, record_llm_call

QUEUE_SIZE = 8
"""Generations that may wait behind the running one; a request beyond them is refused."""
TIMEOUT_S = 60.0
"""Seconds one generation may take from its submission (the upstream's ``timeout_s``)."""
MAX_PROMPT_TOKENS = 4096
"""The longest prompt a generation is started on (a longer one is a failed call): the prompt's
forward pass cannot be cut, and on one CPU thread it reads 35-115 tokens a second."""
EXIT_JOIN_S = 5.0
"""Seconds the exiting process waits for a cancelled generation to stop."""

_STOP = object()  # tells the worker thread to end


class _Job:
    """One generation: its request, its deadline, and how it ended."""

    def __init__(self, request: ChatRequest, deadline: float, stream: bool) -> None:
        self.request = request
        self.deadline = deadline
        self.cancel = threading.Event()
        self.done = threading.Event()
        self.result: ChatResult | None = None
        self.error: BaseException | None = None
        self.pieces: queue.SimpleQueue[str | None] | None = queue.SimpleQueue() if stream else None

    def cancelled(self) -> bool:
        return self.cancel.is_set() or time.monotonic() >= self.deadline


class _Pieces:
    """transformers' streamer protocol (``put``, ``end``): the text of the generated tokens,
    handed on in pieces as it grows (an unfinished character waits for its next token)."""

    def __init__(self, tokenizer: Any, out: queue.SimpleQueue[str | None]) -> None:
        self.tokenizer, self.out = tokenizer, out
        self.ids: list[int] = []
        self.sent = 0
        self.prompt = True

    def put(self, value: Any) -> None:
        if self.prompt:  # generate hands the prompt's ids over first
            self.prompt = False
            return
        self.ids.extend(int(i) for i in value.reshape(-1).tolist())
        self._emit(final=False)

    def end(self) -> None:
        self._emit(final=True)

    def _emit(self, *, final: bool) -> None:
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if (final or not text.endswith("\ufffd")) and len(text) > self.sent:
            self.out.put(text[self.sent :])
            self.sent = len(text)


class WorkerBackend(Backend):
    """``model`` behind one generation thread and a bounded queue (see the module doc)."""

    def __init__(
        self,
        model: HFBackend,
        *,
        queue_size: int = QUEUE_SIZE,
        timeout_s: float = TIMEOUT_S,
        max_prompt_tokens: int = MAX_PROMPT_TOKENS,
    ) -> None:
        check_range("queue_size", queue_size, 0, 10_000)
        check_range("max_prompt_tokens", max_prompt_tokens, 1, 10_000_000)
        self.max_prompt_tokens = max_prompt_tokens
        check_range("timeout_s", timeout_s, 1e-3, 36_000.0)
        self.model = model
        self.name = model.name
        self.timeout_s = timeout_s
        self.queue_size = queue_size
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self._waiting = 0  # jobs queued and not yet taken by the worker
        self._running: _Job | None = None
        self._closed = False
        self.generations = 0
        """Generations the worker ran to their end (cancelled ones included)."""
        self.cancelled = 0
        """Generations stopped at their deadline, or dropped before they started."""
        self._thread = threading.Thread(
            target=self._work, name=f"governor-generate-{self.name}", daemon=True
        )
        self._thread.start()
        _live.add(self)

    def __repr__(self) -> str:
        return f"WorkerBackend({self.model!r}, queue_size={self.queue_size})"

    # ------------------------------------------------------------------ the Backend interface

    def _chat(self, request: ChatRequest) -> ChatResult:
        job = self._submit(request, stream=False)
        if not job.done.wait(max(0.0, job.deadline - time.monotonic())):
            job.cancel.set()
            raise self._late(job)
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def stream_chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        max_tokens: int,
        tools: Sequence[Mapping[str, Any]] | None,
        on_delta: OnDelta,
    ) -> Completion:
        """One completion, its text handed to ``on_delta`` (on this thread) as the worker
        generates it; counted as one call. An exception raised by ``on_delta`` cancels the
        generation and propagates (the call is counted as made, not failed)."""
        request = self.chat_request(
            messages, temperature=temperature, max_tokens=max_tokens, tools=tools
        )
        start = time.perf_counter()
        with llm_call_running():
            job: _Job | None = None
            try:
                job = self._submit(request, stream=True)
                completion = self._read(job, on_delta)
            except BackendError:
                record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start, failed=1))
                raise
            except BaseException:  # on_delta stopped the reading
                if job is not None:
                    job.cancel.set()
                record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start))
                raise
            assert job.result is not None
            usage = replace(job.result.usage, seconds=time.perf_counter() - start)
            record_llm_call(usage)
        return completion

    def check(self) -> None:
        """Raise BackendUnavailable when the worker has stopped or no request can be queued."""
        if self._closed or not self._thread.is_alive():
            raise BackendUnavailable(f"{self.name}: the generation worker has stopped")
        if self._waiting >= self.queue_size and self._running is not None:
            raise BackendUnavailable(
                f"{self.name}: busy: {self._waiting} generation(s) waiting"
                f" (at most {self.queue_size})"
            )

    def close(self, join_s: float = EXIT_JOIN_S) -> None:
        """Cancel the running and waiting generations and end the worker (waits ``join_s``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            running = self._running
            if running is not None:
                running.cancel.set()
            self._jobs.put(_STOP)
        self._thread.join(join_s)

    @property
    def busy(self) -> bool:
        """Whether a generation is running."""
        return self._running is not None

    @property
    def waiting(self) -> int:
        """Generations queued behind the running one."""
        return self._waiting

    # ------------------------------------------------------------------ helpers

    def _submit(self, request: ChatRequest, *, stream: bool) -> _Job:
        deadline = time.monotonic() + self.timeout_s
        outer = stage_deadline()
        job = _Job(request, deadline if outer is None else min(outer, deadline), stream)
        with self._lock:
            if self._closed:
                raise BackendUnavailable(f"{self.name}: the generation worker has stopped")
            if self._running is not None and self._waiting >= self.queue_size:
                raise BackendUnavailable(
                    f"{self.name}: busy: expected room in the queue of {self.queue_size}"
                    f" generation(s), found it full"
                )
            self._waiting += 1
            self._jobs.put(job)
        return job

    def _read(self, job: _Job, on_delta: OnDelta) -> Completion:
        assert job.pieces is not None
        while True:
            try:
                piece = job.pieces.get(timeout=max(0.0, job.deadline - time.monotonic()))
            except queue.Empty:
                job.cancel.set()
                raise self._late(job) from None
            if piece is None:
                break
            on_delta(piece, False)
        job.done.wait()  # set right after the end of the pieces
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result.completions[0]

    def _late(self, job: _Job) -> BackendTimeout:
        return BackendTimeout(
            f"{self.name}: expected a generation within the deadline, found none;"
            f" {'cancelled' if self._running is job else 'dropped before it started'}"
        )

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                self._drain()
                return
            with self._lock:
                self._waiting -= 1
                self._running = job
            try:
                if self._closed:
                    raise BackendUnavailable(f"{self.name}: the generation worker has stopped")
                if job.cancelled():
                    raise BackendTimeout(
                        f"{self.name}: the deadline passed before the generation started"
                    )
                streamer = None if job.pieces is None else _Pieces(self.model.tokenizer, job.pieces)
                job.result = self.model.generate(
                    job.request,
                    cancelled=job.cancelled,
                    streamer=streamer,
                    max_prompt_tokens=self.max_prompt_tokens,
                )
            except Exception as exc:  # the caller raises it on its own thread
                job.error = exc
            finally:
                with self._lock:
                    self._running = None
                    self.generations += 1
                    if isinstance(job.error, BackendTimeout):
                        self.cancelled += 1
                if job.pieces is not None:
                    job.pieces.put(None)
                job.done.set()
            del job

    def _drain(self) -> None:
        """End the jobs still queued after the stop (the worker is closing)."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is _STOP:
                continue
            job.error = BackendUnavailable(f"{self.name}: the generation worker has stopped")
            if job.pieces is not None:
                job.pieces.put(None)
            job.done.set()


_live: weakref.WeakSet[WorkerBackend] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Cancel and join every live worker before the interpreter shuts down."""
    for backend in list(_live):
        backend.close()


def served_backend(spec: str | Path, *, timeout_s: float = TIMEOUT_S) -> WorkerBackend:
    """The local model ``spec`` names (:func:`~governor.backends.local_model.local_backend`:
    ``gemma3-270m`` or a transformers folder) behind its generation worker."""
    return WorkerBackend(local_backend(spec), timeout_s=timeout_s)
