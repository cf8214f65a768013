"""The LLM paths of `governor bench models`, each run through its own benchmark's functions.

Each ``*_path`` function takes the backend and a :class:`Budget` and returns a :class:`PathResult`:
the budget it ran, the decoding settings of its model calls, the measures of that benchmark and
the replies no parser could read (LLM calls, failed calls, model time and wall time are metered
around it by the caller). Imports the benchmarks of the worlds.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from governor.backends.base import Backend
from governor.conversation.chat import TurnResult
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute

DEGENERATE = ("repeated_ngrams", "repeated_symbols", "non_words", "mixed_scripts", "markup", "echo")
"""The features of the degenerate-text overlays (a reply past one's hard limit is degenerate)."""


@dataclasses.dataclass(frozen=True)
class Budget:
    """How much of each path a run makes (episodes, turns, sentences)."""

    driving_episodes: int  # start states per guard (driving and the zero-shot guard)
    driving_horizon: int  # steps before an episode is truncated (60: the task's own)
    smalltalk_conversations: int  # replayed users per condition
    smalltalk_turns: int  # bot turns per conversation
    smalltalk_candidates: int  # candidate replies per call (n)
    human_turns: int  # held-out human turns per corpus (acceptance, likeness reference)
    embed: str  # the embedding model for coherence: auto, on, off
    chip_tasks: str  # household task keys, comma-separated
    chip_constraints: str  # constraint counts k
    chip_max_steps: int  # actions before a household episode is truncated
    chip_regenerations: int  # re-prompts per household step
    zero_shot_episodes: int  # start states of the zero-shot guard
    lang2ltl_sentences: int  # sentences of constraint_patterns.json, one family after another
    chat_turns: int  # scripted user lines of the chat session
    lora_minutes: float = 1.0  # training budget of the LoRA safety value
    lora_iterations: int = 1  # gradient steps of the LoRA safety value at most
    head_transitions: int = 4  # env steps read through the frozen model for the Q head
    head_iterations: int = 50  # gradient steps of the Q head
    value_eval_states: int = 2  # held-out states both safety values are measured on


@dataclasses.dataclass(frozen=True)
class PathResult:
    """What one path measured (see the module doc)."""

    budget: dict[str, Any]
    decoding: dict[str, Any]
    measures: dict[str, Any]
    unparsable: int


def _grid(horizon: int) -> tuple[GridValue, float]:
    """The cached default grid value with episodes truncated at ``horizon`` (the value does not
    depend on it), and the filter margin."""
    gv = load_or_compute(DrivingParams(), GridSpec(), progress=False)[0]
    gv = GridValue(dataclasses.replace(gv.params, horizon=horizon), gv.spec, gv.V, gv.iters)
    return gv, gv.resolution


def driving_path(backend: Backend, b: Budget) -> PathResult:
    """`bench driving --policy llm`: unguarded, myopic stop and exact filter on the same starts."""
    from governor.worlds.driving.bench_run import (
        GUARDS,
        DrivingBenchConfig,
        make_policy,
        run_pair,
        start_states,
    )

    gv, margin = _grid(b.driving_horizon)
    cfg = DrivingBenchConfig(policy="llm", episodes=b.driving_episodes, monitor_states=0)
    starts = start_states(gv, cfg.episodes, cfg.seed, margin)
    measures, invalid = {}, 0
    for guard in GUARDS:
        episodes: list[Any] = []
        policy = make_policy("llm", cfg, gv.params, backend)
        row = run_pair(policy, guard, gv, margin, starts, on_episode=episodes.append, label="llm")
        invalid += row.invalid_replies
        measures[guard] = {
            **{k: v for k, v in dataclasses.asdict(row).items() if k not in ("policy", "guard")},
            "truncated_rate": sum(e.outcome == "truncated" for e in episodes) / len(episodes),
            "deferred_steps": sum(e.decisions.get("defer", 0) for e in episodes),
            "guard_share_of_model_time": share(
                sum(e.judging_seconds for e in episodes), sum(e.propose_seconds for e in episodes)
            ),
        }
    budget = {"episodes": cfg.episodes, "horizon": b.driving_horizon, "guards": list(GUARDS)}
    decoding = {
        "answer": "next-token logits over A/B/C (one counted call a proposal)",
        "temperature": cfg.temperature,
        "shots": cfg.llm_shots,
    }
    return PathResult(budget, decoding, measures, invalid)


def smalltalk_path(backend: Backend, b: Budget) -> PathResult:
    """`bench smalltalk --base llm`: the same replayed users with and without the observer."""
    from governor.conversation.llm_policy import LLMChatPolicy
    from governor.worlds.smalltalk.bench import SmallTalkBenchConfig, run

    cfg = SmallTalkBenchConfig(
        base="llm",
        conversations=b.smalltalk_conversations,
        turns=b.smalltalk_turns,
        candidates=b.smalltalk_candidates,
        human_turns=b.human_turns,
        embed=b.embed,  # type: ignore[arg-type]
    )
    result = run(cfg, backend=backend)
    measures: dict[str, Any] = {"human_accept_rate": result["human_accept_rate"]}
    measures["human_means"], measures["human_drift"] = result["human_means"], result["human_drift"]
    invalid = 0
    for summary in result["conversations"]:
        turns = [t for conv in result["_runs"][summary["condition"]] for t in conv]
        bad = sum(not c.valid for t in turns for a in t.decision.attempts for c in a.candidates)
        invalid += bad
        measures[summary["condition"]] = {
            **summary,
            "invalid_candidates": bad,
            "observer_share_of_model_time": observer_share(turns),
            **degenerate_counts(turns),
            "replies": [[t.context[-1].text if t.context else "", t.reply] for t in turns],
        }
    decoding = {
        "temperature": cfg.temperature,
        "max_tokens": 60,
        "stop": ["\\n"],
        "n": cfg.candidates,
        "examples": cfg.llm_examples,
        "policy": LLMChatPolicy.name,
    }
    budget = {k: getattr(cfg, k) for k in ("conversations", "turns", "candidates", "human_turns")}
    return PathResult({**budget, "embed": b.embed}, decoding, measures, invalid)


def observer_share(turns: list[TurnResult]) -> float | None:
    """The observer's time (checks, feedback, fallback) over the model's proposing time."""
    model = sum(t.decision.proposing_seconds for t in turns)
    return share(sum(t.decision.judging_seconds for t in turns), model)


def share(guard_seconds: float, model_seconds: float) -> float | None:
    """The guard's time over the model's (None when the model took no time)."""
    return guard_seconds / model_seconds if model_seconds > 0 else None


def agent_shares(records: list[dict[str, Any]]) -> dict[str, float | None]:
    """Per agent (the first part of a record's episode id), the guard's time over the model's,
    from decision records' stage latencies."""
    sums: dict[str, list[float]] = {}
    for r in records:
        agent = str(r.get("episode", "")).split("-", 1)[0]
        guard_model = sums.setdefault(agent, [0.0, 0.0])
        for stage, ms in r["latency_ms"].items():
            guard_model[stage == "propose"] += float(ms)
    return {agent: share(g, m) for agent, (g, m) in sums.items()}


def degenerate_counts(turns: list[TurnResult]) -> dict[str, Any]:
    """Said replies past a degenerate-text overlay's hard limit (``degenerate_admitted``) or only
    past its bound (``degenerate_noted``), by the shipped overlays."""
    from governor.overlays.loader import load_overlays

    rules = [o for o in load_overlays() if o.feature in DEGENERATE]
    rejected, noted, which = 0, 0, []
    for t in turns:
        if t.reply is None:
            continue
        verdicts = [o.evaluate(t.context, t.reply) for o in rules]
        hard = [v.constraint for v in verdicts if not v.admissible]
        rejected += bool(hard)
        noted += bool(not hard and any(v.deviation > 0 for v in verdicts))
        which += [{"reply": t.reply, "overlays": hard}] if hard else []
    return {"degenerate_admitted": rejected, "degenerate_noted": noted, "degenerate": which}


def safety_chip_path(backend: Backend, b: Budget) -> PathResult:
    """`bench safety-chip --agent llm`: base, prompt-only and Safety Chip on the same tasks."""
    from governor.trace.read import read_trace
    from governor.worlds.household.bench import SafetyChipBenchConfig, run

    cfg = SafetyChipBenchConfig(
        constraints=b.chip_constraints,
        agent="llm",
        repeats=1,
        max_steps=b.chip_max_steps,
        max_regenerations=b.chip_regenerations,
        tasks=b.chip_tasks,
    )
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "chip.jsonl"
        result = run(cfg, backend=backend, trace_path=trace, progress=False)
        records = read_trace(trace)[0] if trace.is_file() else []
    invalid = sum(
        bool(c.get("error")) for r in records for a in r["attempts"] for c in a["candidates"]
    )
    measures = {
        "rows": result["averages"],
        "untranslated": result["untranslated"],
        "unachievable": result["unachievable"],
        "guard_share_of_model_time": agent_shares(records),
    }
    budget = {k: getattr(cfg, k) for k in ("tasks", "constraints", "repeats", "max_steps")}
    budget["max_regenerations"] = cfg.max_regenerations
    decoding = {"temperature": cfg.temperature, "max_tokens": 24, "stop": ["\\n"], "shots": 1}
    return PathResult(budget, decoding, measures, invalid)


def zero_shot_path(backend: Backend, b: Budget) -> PathResult:
    """ReGuard's zero-shot guard on the erratic policy, each verdict set against the exact value."""
    from governor.worlds.driving.bench_run import make_guard, run_pair, start_states
    from governor.worlds.driving.controllers import ErraticPolicy
    from governor.worlds.driving.reguard import MonitorLog
    from governor.worlds.driving.zero_shot import ZeroShotFallback, ZeroShotJudge, ZeroShotMonitor

    gv, margin = _grid(b.driving_horizon)
    starts = start_states(gv, b.zero_shot_episodes, 0, margin)
    judge = ZeroShotJudge(backend, gv.params)
    parts = ([ZeroShotMonitor(judge)], ZeroShotFallback(backend, gv.params))
    log, measures = MonitorLog(), {}
    for guard in ("zero_shot", "exact_filter"):
        run = run_pair(
            ErraticPolicy(gv.params, p=0.3, seed=0), guard, gv, margin, starts,
            trace=log if guard == "zero_shot" else None, label="erratic",
            parts=parts if guard == "zero_shot" else make_guard(guard, gv, margin),
        )  # fmt: skip
        measures[guard] = {
            k: v for k, v in dataclasses.asdict(run).items() if k not in ("policy", "guard")
        }
    if log.states:
        q = gv.q_batch(np.stack(log.states))[np.arange(len(log.actions)), log.actions]
        exact, said = q > margin, np.asarray(log.allowed)
        measures["verdicts_vs_exact"] = {
            "judged": len(said),
            "agreement": float(np.mean(said == exact)),
            "admitted_unsafe": int(np.sum(said & ~exact)),
            "rejected_safe": int(np.sum(~said & exact)),
        }
    measures["answers"] = dict(judge.counts)
    budget = {"episodes": len(starts), "horizon": b.driving_horizon, "base": "erratic (p=0.3)"}
    decoding = {"answer": "next-token logits over YES/NO, recovery over A/B/C", "max_tokens": 5}
    bad = judge.counts.get("unparsable", 0)
    return PathResult(budget, decoding, measures, bad)


def lang2ltl_path(backend: Backend, b: Budget) -> PathResult:
    """The Lang2LTL translator next to the offline one on constraint_patterns.json's sentences."""
    from governor.ltl.english import lang2ltl
    from governor.ltl.english.translate import substitute, translate_offline
    from governor.ltl.parser import atom, parse_prefix
    from governor.usage import metered
    from governor.worlds.household.ltl_domain import household_domain
    from governor.worlds.household.scene import safety_chip_dir

    data = json.loads((safety_chip_dir() / "constraint_patterns.json").read_text(encoding="utf-8"))
    rounds = [e for i in range(max(map(len, data.values()))) for v in data.values() for e in v[i:i + 1]]  # fmt: skip
    domain, records = household_domain(), []
    for entry in rounds[: b.lang2ltl_sentences]:
        gold_prefix = parse_prefix(entry["ltl"])
        gold = substitute(
            gold_prefix, {a: atom(f"agent_at({a})") for a in gold_prefix.atom_labels()}
        )
        offline = translate_offline(entry["utt"], domain)
        with metered() as meter:
            llm = lang2ltl.translate_llm(entry["utt"], domain, backend)
        records.append({
            "sentence": entry["utt"], "shipped": str(gold), "offline": _text(offline.formula),
            "llm": _text(llm.formula), "method": llm.method, "error": llm.error,
            "llm_calls": meter.total.calls, "llm_failed": meter.total.failed,
            "llm_same_as_offline": _same(llm.formula, offline.formula),
            "llm_same_as_shipped": _same(llm.formula, gold),
            "offline_same_as_shipped": _same(offline.formula, gold),
        })  # fmt: skip
    n = max(1, len(records))
    llm_ok = [r for r in records if r["llm"] is not None and r["method"] == "llm"]
    measures = {
        "sentences": len(records),
        "llm_translated": len(llm_ok),
        "llm_same_as_offline": sum(r["llm_same_as_offline"] for r in records),
        "llm_same_as_shipped": sum(r["llm_same_as_shipped"] for r in records),
        "offline_translated": sum(r["offline"] is not None for r in records),
        "offline_same_as_shipped": sum(r["offline_same_as_shipped"] for r in records),
        "llm_fell_back_offline": sum(r["method"] != "llm" for r in records),
        "llm_calls_per_sentence": sum(r["llm_calls"] for r in records) / n,
        "records": records,
    }
    unparsable = sum(r["error"] is not None for r in records)
    decoding = {"temperature": 0.0, "max_tokens": dict(lang2ltl.MAX_TOKENS), "stop": "end of turn"}
    budget = {"sentences": len(records), "of": len(rounds), "domain": domain.name}
    return PathResult(budget, decoding, measures, unparsable)


def _text(formula: Any) -> str | None:
    return None if formula is None else str(formula)


def _same(a: Any, b: Any) -> bool:
    """Whether no finite trace tells ``a`` and ``b`` apart (one place at a time, plus one place
    neither names; other propositions free)."""
    from governor.ltl import operators as op
    from governor.ltl.satisfiability import one_hot, search

    if a is None or b is None:
        return False
    labels = sorted(a.atom_labels() | b.atom_labels())
    rooms = [x for x in labels if x.startswith("agent_at(")] + ["agent_at(elsewhere)"]
    alphabet = one_hot(rooms, [x for x in labels if not x.startswith("agent_at(")])
    found = search(op.Not(op.Iff(a, b)), alphabet, max_depth=64, max_states=200_000)
    return found.trace is None and found.exhaustive
