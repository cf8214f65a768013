"""Auditing a recorded conversation offline: what the observer would have done at each reply.

A transcript is JSON lines ``{"role": "user" | "assistant", "content": "..."}``. Each assistant
turn is judged as a candidate reply to the turns before it, with the same constraints, arbiter
and seeded leniency as the live observer; nothing is regenerated and no LLM is called (feedback
comes from the templates). The decision is ``execute``, ``execute_with_feedback`` (with the
implicit note) or ``regenerate`` (with the forced feedback, and the fallback move the observer
would have used had the regenerations failed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from governor.conversation.fallbacks import SmallTalkFallback
from governor.conversation.preference import RankingArbiter
from governor.conversation.small_talk import small_talk_constraints
from governor.core import Candidate, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.feedback import TemplateFeedbackWriter
from governor.files import json_loads, read_text
from governor.overlays.features.base import FEATURES, measure
from governor.overlays.features.dialogue import Dialogue, Turn
from governor.trace import to_jsonable
from governor.worlds.smalltalk.settings import ConversationSettings


def read_transcript(path: str | Path) -> Dialogue:
    """The turns of a JSON-lines transcript (system lines are skipped); errors name the line."""
    path = Path(path)
    lines = read_text(path).splitlines()
    turns: list[Turn] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json_loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}, line {n}: not valid JSON: {exc.msg}") from exc
        if not isinstance(item, dict):
            raise ConfigError(f"{path}, line {n}: {expected('a JSON object', line[:80])}")
        role, content = item.get("role"), item.get("content")
        if role == "system":  # instructions to the model, not a turn of the conversation
            continue
        if role not in ("user", "assistant"):
            wanted = "user, assistant or system"
            raise ConfigError(f"{path}, line {n}: role: {expected(wanted, role)}")
        if not isinstance(content, str):
            found = type(content).__name__
            raise ConfigError(f"{path}, line {n}: content: {expected('a string', found)}")
        turns.append(Turn(role, content))
    if not any(t.role == "assistant" for t in turns):
        raise ConfigError(f"{path}: {expected('at least one assistant turn', 'none')}")
    return tuple(turns)


def audit(turns: Dialogue, settings: ConversationSettings) -> dict[str, Any]:
    """``{"turns": [{"index", "features", "verdicts", "decision"}]}``, one per assistant turn."""
    constraints = small_talk_constraints(settings.overlays, settings.observer)
    arbiter = RankingArbiter(settings.observer.observer_config())
    writer, fallback = TemplateFeedbackWriter(), SmallTalkFallback()
    out = []
    for i, turn in enumerate(turns):
        if turn.role != "assistant":
            continue
        context = turns[:i]
        traj = Trajectory(context)
        verdicts = [c.check(traj, turn.text) for c in constraints]
        chosen = arbiter.arbitrate([Candidate(turn.text, turn.text)], [verdicts]).chosen
        decision: dict[str, Any]
        if chosen is not None:
            note = writer.implicit(verdicts)
            kind = "execute_with_feedback" if note else "execute"
            decision = {"kind": kind, "feedback": note.text if note else None}
        else:
            move = fallback.choose(context)
            decision = {
                "kind": "regenerate",
                "feedback": writer.forced(verdicts).text,
                "fallback": {"move": move.key, "text": move.text},
            }
        out.append(
            {
                "index": i,
                "features": {n: round(measure(n, context, turn.text).value, 4) for n in FEATURES},
                "verdicts": [_verdict(v) for v in verdicts],
                "decision": decision,
            }
        )
    return {"turns": out}


def _verdict(v: Verdict) -> dict[str, Any]:
    return {**to_jsonable(v), "severity": v.severity.name}
