"""Auditing recorded agent runs offline: what a policy would have refused, step by step.

A runs file is JSON lines, one run a line: ``{"messages": [...]}`` in the OpenAI chat format
(system, user, assistant with ``tool_calls``, tool results). Every assistant message is judged by
the policy's checks as a candidate given the recorded history before it, and then committed as
executed, so the monitors progress over what actually happened (a refused step still happened),
except that a rule that refused a step keeps its state from before it: it reports each step that
breaks it, not every step after the first. No model is called. A refused reply with tool calls names each call that is refused on its own
(a call refused only beside its siblings is named ``null``). A malformed line is reported with
its line number and the other lines are still judged.

:func:`audit_runs` returns the report (``{"conversations": [...], "summary": {...}}``, in input
order); :func:`html_report` renders it. Reading is linear: each run is read once, each message
judged once. Imports the core types, the observer, the scripted backend (the audit's upstream,
never called), the error tree and the guard's exchange, spec and facade.
"""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from governor.backends.scripted import ScriptedBackend
from governor.core import Decision, DecisionKind, Trajectory, Verdict
from governor.errors import GovernorError, expected
from governor.guard.exchange import Conversation, Reply, conversation_from, reply_of
from governor.guard.facade import Guard
from governor.guard.spec.guard_policy import GuardPolicy
from governor.observer import Observer

MAX_LINE_CHARS = 16 * 1024 * 1024
"""The longest line (one run) read; a longer one is reported malformed."""


class RunAuditor:
    """A policy's checks over recorded runs (one observer, built once)."""

    def __init__(self, policy: GuardPolicy) -> None:
        self.policy = policy
        self.guard = Guard.from_policy(policy, backend=ScriptedBackend([]))
        self.observer: Observer = self.guard.observer

    def close(self) -> None:
        self.guard.close()

    def judge(self, raw: Any) -> tuple[int, list[dict[str, Any]]]:
        """(steps judged, refusals) of one run ``{"messages": [...]}``."""
        if not isinstance(raw, Mapping) or "messages" not in raw:
            raise GovernorError(expected('an object {"messages": [...]}', raw))
        messages = conversation_from(raw["messages"])
        offered = raw.get("tools")
        if not isinstance(offered, list):
            # a run that lists no tools: each tool it calls counts as offered (a recording
            # cannot tell what was offered; give the run's ``tools`` to check names against them)
            called = {c.name for m in messages for c in m.tool_calls}
            offered = [{"type": "function", "function": {"name": n}} for n in sorted(called)]
        observer = self.observer
        memory = {c.name: c.initial_state(None) for c in observer.constraints}
        traj = Trajectory(Conversation((), tuple(offered)), memory=memory)
        steps, refused = 0, []
        for i, m in enumerate(messages):
            after = traj.observation.then(m)
            if m.role != "assistant":
                traj = replace(traj, observation=after)
                continue
            reply = reply_of(m)
            steps += 1
            verdicts = observer.verdicts(traj, reply)
            broken = {v.constraint for v in verdicts if not v.admissible}
            if broken:
                refused += self._refusals(i, traj, reply, verdicts)
            decision = Decision(DecisionKind.EXECUTE, reply, reason="recorded")
            advanced = observer.commit(traj, decision, after)
            if broken:  # a rule that refused this step judges the next as if it had not run
                kept = {k: v for k, v in traj.memory.items() if k in broken}
                advanced = replace(advanced, memory={**advanced.memory, **kept})
            traj = advanced
        return steps, refused

    def _refusals(
        self, index: int, traj: Trajectory, reply: Reply, verdicts: Iterable[Verdict]
    ) -> list[dict[str, Any]]:
        bad = [v for v in verdicts if not v.admissible]
        whole = {
            "message": index,
            "tool": None,
            "rules": [v.constraint for v in bad],
            "reason": "; ".join(f"{v.constraint}: {v.descriptor}" for v in bad),
        }
        if len(reply.tool_calls) < 2:
            tool = reply.tool_calls[0].name if reply.tool_calls else None
            return [{**whole, "tool": tool}]
        out = []
        for call in reply.tool_calls:
            alone = [
                v for v in self.observer.verdicts(traj, Reply(None, (call,))) if not v.admissible
            ]
            if alone:
                out.append({"message": index, "tool": call.name,
                            "rules": [v.constraint for v in alone],
                            "reason": "; ".join(f"{v.constraint}: {v.descriptor}" for v in alone)})  # fmt: skip
        return out or [whole]


def audit_runs(
    policy: GuardPolicy,
    lines: Iterable[str],
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The report on every run in ``lines`` (see the module doc); ``progress(n)`` after each."""
    auditor = RunAuditor(policy)
    start = time.perf_counter()
    conversations: list[dict[str, Any]] = []
    malformed: list[dict[str, Any]] = []
    rules: Counter[str] = Counter()
    steps_total = refused_steps = 0
    try:
        for n, line in enumerate(lines, start=1):
            if progress is not None:
                progress(n)
            if not line.strip():
                continue
            try:
                if len(line) > MAX_LINE_CHARS:
                    raise GovernorError(f"expected at most {MAX_LINE_CHARS} characters a line,"
                                        f" found {len(line)}")  # fmt: skip
                try:
                    raw = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    raise GovernorError(f"not valid JSON: {exc}") from None
                steps, refused = auditor.judge(raw)
            except (GovernorError, ValueError, TypeError, RecursionError) as exc:
                malformed.append({"line": n, "error": str(exc)[:500]})
                continue
            conversations.append({"line": n, "steps": steps, "refused": refused})
            steps_total += steps
            refused_steps += len({r["message"] for r in refused})
            rules.update(rule for r in refused for rule in r["rules"])
    finally:
        auditor.close()
    seconds = time.perf_counter() - start
    summary = {
        "policy": policy.source,
        "runs": len(conversations),
        "malformed": malformed,
        "steps": steps_total,
        "refused_steps": refused_steps,
        "runs_with_refusals": sum(1 for c in conversations if c["refused"]),
        "rules": dict(rules.most_common()),
        "seconds": round(seconds, 3),
        "runs_per_minute": round(60 * len(conversations) / seconds) if seconds > 0 else None,
        "model_calls": 0,
    }
    return {"conversations": conversations, "summary": summary}


def html_report(report: Mapping[str, Any]) -> str:
    """A self-contained HTML page of the report: the summary, then every refusal."""
    s = report["summary"]
    esc = html.escape
    rows = "".join(
        f"<tr><td>{c['line']}</td><td>{r['message']}</td><td>{esc(str(r['tool']))}</td>"
        f"<td>{esc(', '.join(r['rules']))}</td><td>{esc(r['reason'])}</td></tr>"
        for c in report["conversations"]
        for r in c["refused"]
    )
    bad = "".join(f"<li>line {m['line']}: {esc(m['error'])}</li>" for m in s["malformed"])
    counts = "".join(f"<li>{esc(k)}: {v}</li>" for k, v in s["rules"].items())
    return (
        "<!doctype html><meta charset='utf-8'><title>governor audit</title>"
        "<style>body{font-family:sans-serif}td{border-top:1px solid #ccc;padding:2px 6px}</style>"
        f"<h1>governor audit: {esc(str(s['policy']))}</h1>"
        f"<p>{s['runs']} runs, {s['steps']} steps judged, {s['refused_steps']} refused in"
        f" {s['runs_with_refusals']} runs; {len(s['malformed'])} malformed lines.</p>"
        f"<h2>Refusals by rule</h2><ul>{counts}</ul>"
        + (f"<h2>Malformed lines</h2><ul>{bad}</ul>" if bad else "")
        + "<h2>Refused steps</h2><table><tr><th>line</th><th>message</th><th>tool</th>"
        f"<th>rules</th><th>reason</th></tr>{rows}</table>"
    )
