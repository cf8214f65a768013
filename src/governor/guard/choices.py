"""Several choices for one request (OpenAI's ``n``), in a trajectory that commits one reply.

With ``n > 1`` the observer proposes at least ``n`` candidates per attempt
(:func:`choice_observer`) and judges every one as usual; the answer's choices are the admitted
candidates of the attempt that succeeded, the arbiter's pick first, at most ``n``
(:func:`admitted_choices`). None of them is committed by the guard: the client picks one and
sends it back as the assistant message of its next request, which commits it as an executed
action (the session's usual catch-up). So the trajectory holds exactly the choice the client went
on with, and every choice it could pick was admitted in the session's state. When no candidate
is admitted the answer is the fallback's one reply, committed as usual. Imports the core types,
the observer and the guard's exchange.
"""

from __future__ import annotations

from dataclasses import replace

from governor.core import Decision, DecisionKind
from governor.guard.exchange import Reply
from governor.observer import Observer

MAX_CHOICES = 8
"""The most choices one request may ask for."""


def choice_observer(observer: Observer, n: int) -> Observer:
    """``observer`` proposing at least ``n`` candidates per attempt."""
    if n <= observer.config.n_candidates:
        return observer
    return Observer(
        observer.policy,
        observer.constraints,
        observer.fallback,
        config=replace(observer.config, n_candidates=n),
        feedback=observer.feedback,
        arbiter=observer.arbiter,
    )


def admitted_choices(decision: Decision, n: int) -> tuple[Reply, ...]:
    """The executed reply and the other admitted candidates of its attempt, at most ``n``; ()
    when ``decision`` did not execute a proposed reply."""
    executed = (DecisionKind.EXECUTE, DecisionKind.EXECUTE_WITH_FEEDBACK)
    if decision.kind not in executed or not decision.attempts:
        return ()
    attempt = decision.attempts[-1]
    first = attempt.candidates[attempt.chosen].action if attempt.chosen is not None else None
    out = [first] if isinstance(first, Reply) else []
    for i, cand in enumerate(attempt.candidates):
        row = attempt.verdicts[i] if i < len(attempt.verdicts) else ()
        admitted = cand.valid and all(v.admissible for v in row)
        if i != attempt.chosen and admitted and isinstance(cand.action, Reply):
            out.append(cand.action)
    return tuple(out[:n])
