"""Running simulated conversations and scoring them against human replies.

:func:`converse` plays one user against one observer; :func:`summarize` turns the conversations
of one condition into the small-talk benchmark's figures (likeness and drift from
:mod:`governor.worlds.smalltalk.metrics`, the observer's feedback rates, regenerations, fallbacks,
LLM calls and its own time per turn).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from governor.conversation.chat import ChatSession, TurnResult
from governor.conversation.small_talk import TOLERATED
from governor.observer import Observer
from governor.overlays.features.base import DEFAULT_RESOURCES, Resources
from governor.overlays.features.dialogue import Dialogue, Turn
from governor.worlds.smalltalk.metrics import (
    CRITERIA,
    Values,
    drift_error,
    feature_table,
    likeness,
    mean_drift,
)
from governor.worlds.smalltalk.user_sim import ReplayedUser, UserSimulator


def converse(observer: Observer, user: UserSimulator, turns: int, episode: str) -> list[TurnResult]:
    """At most ``turns`` bot turns; the user may stop sooner."""
    session = ChatSession(observer, episode=episode)
    for _ in range(turns):
        said = user.next_turn(session.dialogue)
        if said is None:
            break
        session.respond(said)
    return session.turns


def summarize(
    condition: str,
    convs: Sequence[Sequence[TurnResult]],
    human: Mapping[str, Values],
    res: Resources = DEFAULT_RESOURCES,
) -> dict[str, Any]:
    """The figures of one condition (features computed with ``res``); rates are shares of turns.

    ``implicit_rate``: executed with implicit feedback; ``forced_rate``: at least one attempt
    rejected (forced feedback or a fallback); ``tolerated_rate``: accepted only because the
    seeded leniency spared forced feedback; ``replies``: every turn's user text, reply and
    decision, for reading.
    """
    turns = [t for c in convs for t in c]
    n = max(1, len(turns))
    values = feature_table(_said(turns), res=res)
    per_conv = [feature_table(_said(c), res=res) for c in convs if _said(c)]

    def rate(pred: Callable[[TurnResult], bool]) -> float:
        return sum(1 for t in turns if pred(t)) / n

    return {
        "condition": condition,
        "conversations": len(convs),
        "turns": len(turns),
        "likeness": {f: likeness(values[f], human[f]) for f in CRITERIA},
        "drift": mean_drift(per_conv),
        "drift_se": drift_error(per_conv),
        "means": {f: float(values[f].mean()) if len(values[f]) else None for f in CRITERIA},
        "implicit_rate": rate(lambda t: t.decision.kind.value == "execute_with_feedback"),
        "forced_rate": rate(lambda t: any(a.chosen is None for a in t.decision.attempts)),
        "tolerated_rate": rate(
            lambda t: any(TOLERATED in v.descriptor for v in t.decision.verdicts)
        ),
        "regenerations": sum(t.decision.regenerations for t in turns),
        "fallbacks": sum(t.decision.kind.value == "fallback" for t in turns),
        "llm_calls_per_turn": sum(t.llm_calls for t in turns) / n,
        "llm_failed": sum(t.llm_failed for t in turns),
        "observer_ms_p50": 1000 * statistics.median([t.observer_seconds for t in turns] or [0.0]),
        "replies": [
            {"user": t.context[-1].text if t.context else "", "reply": t.reply}
            | {"decision": t.decision.kind.value, "reason": t.decision.reason}
            | {"candidates": [c.text for a in t.decision.attempts for c in a.candidates]}
            for t in turns
        ],
    }


def _said(turns: Sequence[TurnResult]) -> list[tuple[Dialogue, str]]:
    return [(t.context, t.reply) for t in turns if t.reply is not None]


def human_drift(
    users: Sequence[ReplayedUser], res: Resources = DEFAULT_RESOURCES
) -> dict[str, float]:
    """Drift of the replies the other human really gave in the replayed dialogues."""
    convs = []
    for u in users:
        pairs: list[tuple[Dialogue, str]] = []
        context: Dialogue = ()
        for said, reply in zip(u.turns, u.replies, strict=False):
            context = (*context, Turn("user", said))
            pairs.append((context, reply))
            context = (*context, Turn("assistant", reply))
        if pairs:
            convs.append(feature_table(pairs, res=res))
    return mean_drift(convs)


def changed_replies(
    base: Sequence[Sequence[TurnResult]], guarded: Sequence[Sequence[TurnResult]], k: int = 6
) -> list[dict[str, Any]]:
    """Up to ``k`` turns where the observer's reply differs from the base's, with its decision."""
    out: list[dict[str, Any]] = []
    for b_conv, g_conv in zip(base, guarded, strict=True):
        for b, g in zip(b_conv, g_conv, strict=False):
            if b.reply != g.reply and len(out) < k:
                out.append(
                    {
                        "user": b.context[-1].text if b.context else "",
                        "base": b.reply,
                        "observer": g.reply,
                        "decision": g.decision.kind.value,
                        "reason": g.decision.reason,
                    }
                )
    return out
