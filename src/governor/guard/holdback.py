"""Streaming with a hold-back buffer: a reply released in chunks, each only once it is checked.

The upstream is asked with ``stream: true`` (:meth:`~.upstream.UpstreamPolicy.stream`); its text
is held back and cut at checkable boundaries (a sentence end, or ``chunk_tokens`` words:
:func:`boundary`). At each boundary the text so far is judged, with the session's trajectory in
view, by the checks that judge prefixes (:mod:`.prefix`); the new part is released only if every
one admits it. A refused prefix stops the reading. Tool calls are never released in parts: once
a reply starts one (or its text opens a JSON object, which may be tool calls written as text),
the rest is held until the whole reply is judged. Nothing is released while a check that can
only judge the whole reply in one go (``hold``) is in force.

:func:`streaming_observer` wraps the session's observer so that its usual step does the rest:
the whole reply is judged by every check before its last chunk (the rest) is released; while
nothing is released a refused reply regenerates within the policy's bound; once text is out,
a refusal (or an upstream error) ends in the fallback, whose text the client gets after the
released text (what the trajectory commits). What the client was sent is held by a
:class:`~.release.ReleaseGate`, closed when the step ends, so a stage that overran its time can
release nothing more. Imports the core types, the observer, the usage meter and the guard's
messages, prefix judgements, release gate and upstream.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from governor.core import (
    Candidate,
    Decision,
    DecisionKind,
    Feedback,
    NoMoreProposals,
    Policy,
    Trajectory,
    Verdict,
)
from governor.errors import ConfigError
from governor.guard.exchange import Reply
from governor.guard.prefix import PrefixJudgement, judgement_of
from governor.guard.release import SENTENCE_END, ReleaseGate
from governor.guard.upstream import UpstreamPolicy, completion_candidate
from governor.observer import Observer
from governor.usage import metered

_WORD = re.compile(r"\S+")


def boundary(pending: str, chunk_tokens: int) -> int:
    """How much of ``pending`` ends at a checkable boundary: after its last sentence end, or,
    when more than ``chunk_tokens`` words follow that, before its last (maybe unfinished) word.
    0: none yet."""
    at = 0
    for m in SENTENCE_END.finditer(pending):
        at = m.end()
    words = list(_WORD.finditer(pending, at))
    if len(words) > chunk_tokens:
        at = words[-1].start()
    return at


class _PrefixRefused(Exception):
    """Stops the reading of a reply whose prefix was refused (a signal, not an error)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix


class _HoldBack:
    """One attempt's buffer: the text received, released at boundaries once judged."""

    def __init__(
        self,
        gate: ReleaseGate,
        judge: Callable[[str], tuple[Verdict, ...]] | None,
        chunk_tokens: int,
    ) -> None:
        self.gate, self.judge, self.chunk_tokens = gate, judge, chunk_tokens
        self.text = ""
        self.held = judge is None  # nothing is released: a check holds the whole reply

    def feed(self, piece: str, calling: bool) -> None:
        self.gate.upstream_token()
        self.text += piece
        if calling or self.text.lstrip().startswith("{"):
            self.held = True
        if self.held or self.judge is None:
            return
        done = len(self.gate.text)
        cut = boundary(self.text[done:], self.chunk_tokens)
        prefix = self.text[: done + cut]
        if not cut or not prefix.strip() or not self.text[done + cut :].strip():
            return  # the last chunk waits for the whole reply's judgement
        start = time.perf_counter()
        with metered() as meter:
            verdicts = self.judge(prefix)
        refused = [v.constraint for v in verdicts if not v.admissible]
        self.gate.chunks.append(
            {
                "index": len(self.gate.chunks),
                "chars": cut,
                "check_s": time.perf_counter() - start,
                "llm_calls": meter.total.calls,
                "admitted": not refused,
                "by": refused,
            }
        )
        if refused or not self.gate.release(prefix[done:]):
            raise _PrefixRefused(prefix)


class HoldBackUpstream(Policy):
    """The upstream as a base policy whose one candidate is streamed through a hold-back buffer
    (see the module doc)."""

    name = "upstream"

    def __init__(
        self, upstream: UpstreamPolicy, observer: Observer, gate: ReleaseGate, chunk_tokens: int
    ) -> None:
        self.upstream, self.observer = upstream, observer
        self.gate, self.chunk_tokens = gate, chunk_tokens
        kinds = {c.name: judgement_of(c) for c in observer.constraints}
        self.held = PrefixJudgement.HOLD in kinds.values()
        each = PrefixJudgement.EACH_PREFIX
        self.prefix_checks = tuple(c for c in observer.constraints if kinds[c.name] is each)

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        if self.gate.text:
            raise NoMoreProposals(
                f"text was released ({len(self.gate.text)} characters): no regeneration once"
                " text is out"
            )
        judge = None if self.held else partial(self._verdicts, traj)
        buffer = _HoldBack(self.gate, judge, self.chunk_tokens)
        try:
            completion = self.upstream.stream(traj, feedback, buffer.feed)
        except _PrefixRefused as stop:  # judged again, whole, by the observer: it is refused
            return [Candidate(Reply(stop.prefix), stop.prefix)]
        return [completion_candidate(completion)]

    def _verdicts(self, traj: Trajectory, text: str) -> tuple[Verdict, ...]:
        return self.observer.verdicts(traj, Reply(text), self.prefix_checks)


def streaming_observer(observer: Observer, gate: ReleaseGate, chunk_tokens: int) -> Observer:
    """``observer`` with its upstream streamed through ``gate`` (one candidate per attempt)."""
    if not isinstance(observer.policy, UpstreamPolicy):
        found = type(observer.policy).__name__
        raise ConfigError(f"streaming: expected an observer over the upstream, found {found}")
    return Observer(
        HoldBackUpstream(observer.policy, observer, gate, chunk_tokens),
        observer.constraints,
        observer.fallback,
        config=replace(observer.config, n_candidates=1),
        feedback=observer.feedback,
        arbiter=observer.arbiter,
    )


def executed_streamed(decision: Decision) -> bool:
    """Whether ``decision`` executes the streamed reply (not a fallback's)."""
    return decision.kind in (DecisionKind.EXECUTE, DecisionKind.EXECUTE_WITH_FEEDBACK)
