"""`governor bench supervision`: each supervision mechanism against its ablation, same seeded users.

Runs the scenario modules by name (``deescalation``, ``training``, ``tutoring``, ``crisis``,
``ensemble``); a module that is not there is skipped with a note, never silently. Prints one table
per scenario with every condition side by side (the treatment and the ablation marked), writes
the JSON (``{"scenarios": {NAME: ScenarioResult.to_json()}, "skipped": ..., "timing": ...}``) and a
plot of each scenario's series over time, and times one supervisor decision.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.report import Section, print_table
from governor.worlds.supervision.scenario import ScenarioResult
from governor.worlds.supervision.timing import decision_timing

SCENARIOS = ("deescalation", "training", "tutoring", "crisis", "ensemble")
PACKAGE = "governor.worlds.supervision"


@dataclasses.dataclass(frozen=True)
class SupervisionBenchConfig:
    """What `governor bench supervision` runs."""

    episodes: int = option(30, "simulated users (students, learners, ...) per condition")
    seed: int = option(0, "seed of the simulated users and the offline generators")
    scenarios: str = option(",".join(SCENARIOS), "comma-separated scenarios to run")
    timing_decisions: int = option(2000, "supervisor decisions timed (0: no timing)")

    def __post_init__(self) -> None:
        check_range("episodes", self.episodes, 1, 100_000)
        check_range("seed", self.seed, 0, 2**32 - 1)
        check_range("timing_decisions", self.timing_decisions, 0, 10_000_000)
        unknown = [s for s in self.names if s not in SCENARIOS]
        if unknown or not self.names:
            known = ", ".join(SCENARIOS)
            raise ConfigError(f"scenarios: {expected(f'some of {known}', self.scenarios)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.strip() for s in self.scenarios.split(",") if s.strip())


def load_scenario(name: str) -> Any | None:
    """The scenario module ``name``, or None when it does not exist (another error propagates)."""
    module = f"{PACKAGE}.{name}"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return None
        raise


def run(cfg: SupervisionBenchConfig) -> dict[str, Any]:
    """Every requested scenario; JSON-ready except ``_results`` (the ScenarioResult objects)."""
    results: dict[str, ScenarioResult] = {}
    skipped: dict[str, str] = {}
    for name in cfg.names:
        module = load_scenario(name)
        if module is None:
            skipped[name] = f"module {PACKAGE}.{name} is not there; scenario skipped"
            continue
        result = module.run(episodes=cfg.episodes, seed=cfg.seed)
        if not isinstance(result, ScenarioResult):
            raise ConfigError(
                f"scenario {name}: {expected('a ScenarioResult', type(result).__name__)}"
            )
        results[name] = result
    timing = decision_timing(cfg.timing_decisions, cfg.seed) if cfg.timing_decisions else {}
    return {
        "config": dataclasses.asdict(cfg),
        "scenarios": {n: r.to_json() for n, r in results.items()},
        "skipped": skipped,
        "timing": timing,
        "_results": results,
    }


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def table_lines(result: ScenarioResult) -> list[list[str]]:
    """One row per condition; the treatment and the ablation marked in the first column."""
    rows = [dict(r) for r in result.table] or [
        {"condition": c, result.metric: v} for c, v in result.conditions.items()
    ]
    keys = list(rows[0])
    mark = {result.treatment: " (treatment)", result.ablation: " (ablation)"}
    lines = [keys]
    for row in rows:
        cond = str(row.get("condition", ""))
        lines.append([cond + mark.get(cond, "")] + [_cell(row.get(k)) for k in keys[1:]])
    return lines


def _print_wide(console: Console, title: str, rows: list[list[str]]) -> None:
    """The table at the width it needs (a console narrower than that would cut its cells)."""
    needed = sum(max(len(r[i]) for r in rows) + 3 for i in range(len(rows[0]))) + 4
    wide = Console(file=console.file, width=max(console.width, needed), emoji=False)
    print_table(wide, title, rows)


def print_result(console: Console, result: dict[str, Any]) -> None:
    for name, r in result["_results"].items():
        better = "lower" if r.lower_is_better else "higher"
        _print_wide(console, f"{name}: {r.metric} ({better} is better)", table_lines(r))
        console.print(
            f"{name}: {r.treatment} {r.conditions[r.treatment]:.4g} vs {r.ablation}"
            f" {r.conditions[r.ablation]:.4g} (effect {r.effect:+.4g}, positive = better)"
        )
        for note in r.notes:
            console.print(f"  {note}", markup=False)
    for name, note in result["skipped"].items():
        console.print(f"{name}: {note}", style="yellow")
    t = result["timing"]
    if t:
        console.print(
            f"supervisor decision: mean {t['mean_ms']:.3f} ms, median {t['median_ms']:.3f} ms,"
            f" p95 {t['p95_ms']:.3f} ms wall; CPU mean {t['cpu_mean_ms']:.3f} ms, p95"
            f" {t['cpu_p95_ms']:.3f} ms; over {t['decisions']} decisions (target <= 1 ms)"
        )


def write(result: dict[str, Any], json_path: Path | None, plot_path: Path | None) -> None:
    if json_path is not None:
        write_json(json_path, {k: v for k, v in result.items() if not k.startswith("_")})
    if plot_path is not None:
        from governor.worlds.supervision.plots import plot_series

        plot_series(result["_results"], plot_path)


def add_parser(bench: Subcommands) -> None:
    """`governor bench supervision`."""
    p = bench.add_parser(
        "supervision", help="supervision mechanisms against their ablations (simulated users)"
    )
    add_dataclass_args(p, SupervisionBenchConfig)
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--plot", type=Path, help="write the series plot (PNG) here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    result = run(dataclass_from_args(SupervisionBenchConfig, args))
    print_result(console, result)
    write(result, args.json, args.plot)
    return 0


def demo_section(out_dir: Path, console: Console) -> Section:
    """De-escalation and training at a small budget; JSON and plot into ``out_dir``."""
    cfg = SupervisionBenchConfig(
        episodes=4, scenarios="deescalation,training", timing_decisions=500
    )
    result = run(cfg)
    write(result, out_dir / "supervision.json", out_dir / "supervision.png")
    print_result(console, result)
    paragraphs = [
        "A supervisor above the observer chooses modes (small talk, breathing, creative,"
        " silence, crisis protocol) under LTL mode rules, gates engagement, and overrides"
        " protectively. Users are <b>simulated</b> (offline models with stated dynamics) and"
        " replies come from an offline generator, <b>not a model</b>; a small demo budget."
    ]
    for name, r in result["_results"].items():
        paragraphs.append(
            f"{name}: {r.metric} {r.conditions[r.treatment]:.3g} with {r.treatment},"
            f" {r.conditions[r.ablation]:.3g} with {r.ablation}."
        )
    t = result["timing"]
    paragraphs.append(f"One supervisor decision: median {t['median_ms']:.3f} ms (target 1 ms).")
    first = next(iter(result["_results"].values()))
    return Section(
        "Supervision: modes, gating and protective override",
        paragraphs,
        table_lines(first),
        ["supervision.png"],
        ["supervision.json"],
        [(n, table_lines(r)) for n, r in list(result["_results"].items())[1:]],
    )
