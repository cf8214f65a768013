"""Tables, files and the command of `governor bench reguard` (the computing is in reguard.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from governor.files import write_json
from governor.flags import (
    Subcommands,
    add_backend_args,
    add_dataclass_args,
    backend_config_from_args,
    dataclass_from_args,
)
from governor.report import Section, print_table
from governor.safety_values.metrics import shown

GUARD_NAMES = {
    "none": "unguarded",
    "exact": "Exact value (grid)",
    "privileged": "Privileged (state DDQN)",
    "reguard_text": "ReGuard (text DDQN)",
    "reguard_llm": "ReGuard (LLM + LoRA)",
    "llamaguard": "LlamaGuard-style (one-step, stop)",
    "llamaguard_myopic": "LlamaGuard-style + Myopic recovery",
    "zero_shot": "ZeroShot (endpoint)",
}


def _pct(row: Mapping[str, Any], key: str) -> str:
    return shown(row.get(key), percent=True)


def table1_lines(driving: Mapping[str, Any]) -> Iterator[list[str]]:
    """Table 1: the guards on the erratic policy, with the monitor metrics."""
    yield ["model", "success", "failure", "value F1", "TP", "TN", "FN", "scored"]
    for r in driving["table1"]:
        yield [
            GUARD_NAMES.get(r["guard"], r["guard"]),
            _pct(r, "success_rate"),
            _pct(r, "failure_rate"),
            shown(r.get("value_f1")),
            shown(r.get("tp_rate")),
            shown(r.get("tn_rate")),
            shown(r.get("fn_rate")),
            str(r.get("scored", "n/a")),
        ]


def shielding_lines(driving: Mapping[str, Any]) -> Iterator[list[str]]:
    """The shielding figure as a table: every guard on every base policy."""
    yield [
        "base policy",
        "guard",
        "success",
        "failure",
        "stopped",
        "rollout F1",
        "interventions",
        "LLM calls",
    ]
    for r in driving["shielding"]:
        yield [
            r["policy"],
            GUARD_NAMES.get(r["guard"], r["guard"]),
            _pct(r, "success_rate"),
            _pct(r, "failure_rate"),
            _pct(r, "stop_rate"),
            shown(r.get("rollout_f1")),
            _pct(r, "intervention_rate") if r["guard"] != "none" else "n/a",
            str(r.get("llm_calls", 0)),
        ]


def commerce_lines(commerce: Mapping[str, Any]) -> Iterator[list[str]]:
    """Table 2: success rate per method over the starting carts."""
    yield ["method", "starts", "success", "of starts with a safe sequence"]
    for r in commerce["methods"]:
        yield [
            r["method"],
            str(r["starts"]),
            _pct(r, "success_rate"),
            _pct(r, "success_rate_feasible"),
        ]


def backseat_lines(backseat: Mapping[str, Any], setting: str) -> Iterator[list[str]]:
    """Table 3 (full) or 4 (shielded)."""
    yield ["advisor", "persona", "success", "failure", "rollout F1", "interventions", "LLM calls"]
    for r in backseat["rows"]:
        if r["setting"] != setting:
            continue
        who = r["advisor"] + (" + shield" if r.get("shield") else "")
        yield [
            who,
            r["persona"],
            _pct(r, "success_rate"),
            _pct(r, "failure_rate"),
            shown(r.get("rollout_f1")),
            _pct(r, "intervention_rate"),
            str(r.get("llm_calls", 0)),
        ]


def tables(result: Mapping[str, Any]) -> Iterator[tuple[str, list[list[str]]]]:
    """(title, rows) of every table the result holds."""
    if "driving" in result:
        d = result["driving"]
        yield "Table 1, agentic driving (erratic base policy)", list(table1_lines(d))
        yield "Agentic driving: shielding base policies", list(shielding_lines(d))
    if "commerce" in result:
        yield "Table 2, agentic commerce", list(commerce_lines(result["commerce"]))
    if "backseat" in result:
        b = result["backseat"]
        yield "Table 3, backseat driver: full", list(backseat_lines(b, "full"))
        yield "Table 4, backseat driver: shielded", list(backseat_lines(b, "shielded"))


def print_result(console: Console, result: Mapping[str, Any]) -> None:
    for title, rows in tables(result):
        print_table(console, title, rows)
    for note in result.get("notes", ()):
        console.print(f"note: {note}")
    console.print(f"{result['seconds']:.0f} s")


def write(result: Mapping[str, Any], json_path: Path | None, plot_path: Path | None) -> None:
    """The JSON (keys starting with '_' left out) and the safe-set plot."""
    if json_path is not None:
        public = {k: v for k, v in result.items() if not k.startswith("_")}
        if "driving" in public:
            public["driving"] = {k: v for k, v in public["driving"].items() if k[0] != "_"}
        write_json(json_path, public)
    driving = result.get("driving")
    if plot_path is not None and driving is not None:
        from governor.worlds.driving.reguard_plot import plot_safe_sets

        gv, learned = driving["_grid"], driving["_learned"]
        names = {"state": "privileged (state)", "text": "ReGuard (text)", "llm": "ReGuard (LLM)"}
        plot_safe_sets(gv, {names[o]: _max_q(q) for o, q in learned.items()}, plot_path)


def _max_q(q: Any) -> Callable[[np.ndarray], np.ndarray]:
    return lambda states: np.asarray(q.q_states(states)).max(axis=1)


def add_parser(bench: Subcommands) -> None:
    """`governor bench reguard`."""
    from governor.papers.reguard import ReGuardBenchConfig

    p = bench.add_parser("reguard", help="the ReGuard tables: driving, commerce, backseat driver")
    add_dataclass_args(p, ReGuardBenchConfig)
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--plot", type=Path, help="write learned vs exact safe sets (PNG) here")
    add_backend_args(p)
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.papers.reguard import ReGuardBenchConfig, run

    cfg = dataclass_from_args(ReGuardBenchConfig, args)
    result = run(cfg, backend_config_from_args(args))
    print_result(console, result)
    write(result, args.json, args.plot)
    return 0


def demo_section(
    out_dir: Path, console: Console, *, episodes: int = 40, train_steps: int = 10_000
) -> Section:
    """Table 1 and the shielding table at a small budget, with a short privileged DDQN run
    bounded by gradient steps (so identical runs give identical tables)."""
    from governor.papers.reguard import ReGuardBenchConfig, run

    cfg = ReGuardBenchConfig(
        tables="driving",
        episodes=episodes,
        learned="state",
        train_steps=train_steps,
        checkpoints=str(out_dir / "reguard-checkpoints"),
        monitor_steps=200,
    )
    result = run(cfg)
    write(result, out_dir / "reguard.json", out_dir / "reguard.png")
    print_result(console, result)
    d = result["driving"]
    learned = d["learned"].get("state", {})
    agreement = learned.get("agreement")
    return Section(
        "Learned safety filters (ReGuard)",
        [
            "A reach-avoid double DQN learned a safety value from the car's state in "
            f"{train_steps:,} gradient steps of training (about a minute here; sign agreement with the exact value on held-out states: "
            f"{shown(agreement, percent=True)}); its filter, with a margin calibrated on held-out "
            f"states ({d['margins'].get('privileged', 0.0):.3f}), shields the same base policies "
            "as the exact filter and the learned one-step (LlamaGuard-style) baselines. The text "
            "observation model, which reads the prompt an LLM reads, needs about 15-20 minutes: "
            "<code>governor train safety-value --obs text --minutes 20 --lr-period 5000 "
            "--eps-period 5000 --out reguard-checkpoints/driving-text</code>, then <code>governor bench reguard</code>.",
            "Table 1 scores the monitors on the erratic policy; value F1 compares the monitor's "
            "sign with the exact value, TP/TN its verdicts with what its own recovery policy "
            "achieves, FN with the best recovery (the exact Q).",
        ],
        list(table1_lines(d)),
        ["reguard.png"],
        ["reguard.json"],
        [("Shielding base policies", list(shielding_lines(d)))],
    )
