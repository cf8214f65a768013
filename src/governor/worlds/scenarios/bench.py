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

from governor.backends import Backend, backend_from_config
from governor.config import BackendConfig, check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import (
    Subcommands,
    add_backend_args,
    add_dataclass_args,
    backend_config_from_args,
    dataclass_from_args,
)
from governor.report import Section
from governor.worlds.scenarios.bench_report import print_result, table_lines
from governor.worlds.scenarios.llm_agents import label
from governor.worlds.scenarios.scenario import ScenarioResult
from governor.worlds.scenarios.timing import decision_timing

SCENARIOS = ("deescalation", "training", "tutoring", "crisis", "ensemble")
PACKAGE = "governor.worlds.scenarios"


@dataclasses.dataclass(frozen=True)
class SupervisionBenchConfig:
    """What `governor bench supervision` runs."""

    episodes: int = option(30, "simulated users (students, learners, ...) per condition")
    seed: int = option(0, "seed of the simulated users and the offline generators")
    scenarios: str = option(",".join(SCENARIOS), "comma-separated scenarios to run")
    timing_decisions: int = option(2000, "supervisor decisions timed (0: no timing)")
    calibration_users: int = option(
        120, "crisis: users of the threshold calibration run (other seeds than the evaluation's)"
    )

    def __post_init__(self) -> None:
        check_range("episodes", self.episodes, 1, 100_000)
        check_range("seed", self.seed, 0, 2**32 - 1)
        check_range("timing_decisions", self.timing_decisions, 0, 10_000_000)
        check_range("calibration_users", self.calibration_users, 1, 100_000)
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


def scenario_options(
    module: Any, cfg: SupervisionBenchConfig, backend: Backend | None
) -> dict[str, Any]:
    """What a scenario module takes besides episodes and seed: the backend (modules that declare
    ``LLM_ROLES``) and the calibration users (modules with ``CALIBRATION_USERS``)."""
    out: dict[str, Any] = {}
    if backend is not None and hasattr(module, "LLM_ROLES"):
        out["backend"] = backend
    if hasattr(module, "CALIBRATION_USERS"):
        out["calibration_users"] = cfg.calibration_users
    return out


def configured(config: BackendConfig) -> bool:
    """Whether ``config`` names a model (an endpoint and a model name, or a local model path)."""
    return config.model_path is not None or (
        config.base_url is not None and config.model is not None
    )


def run(cfg: SupervisionBenchConfig, backend: Backend | None = None) -> dict[str, Any]:
    """Every requested scenario; JSON-ready except ``_results`` (the ScenarioResult objects).
    With ``backend`` the scenarios that declare ``LLM_ROLES`` use it; the others stay offline."""
    results: dict[str, ScenarioResult] = {}
    skipped: dict[str, str] = {}
    for name in cfg.names:
        module = load_scenario(name)
        if module is None:
            skipped[name] = f"module {PACKAGE}.{name} is not there; scenario skipped"
            continue
        options = scenario_options(module, cfg, backend)
        result = module.run(episodes=cfg.episodes, seed=cfg.seed, **options)
        if not isinstance(result, ScenarioResult):
            raise ConfigError(
                f"scenario {name}: {expected('a ScenarioResult', type(result).__name__)}"
            )
        results[name] = result
    timing = decision_timing(cfg.timing_decisions, cfg.seed) if cfg.timing_decisions else {}
    return {
        "config": dataclasses.asdict(cfg),
        "agents": label(backend),
        "scenarios": {n: r.to_json() for n, r in results.items()},
        "skipped": skipped,
        "timing": timing,
        "_results": results,
    }


def write(result: dict[str, Any], json_path: Path | None, plot_path: Path | None) -> None:
    if json_path is not None:
        write_json(json_path, {k: v for k, v in result.items() if not k.startswith("_")})
    if plot_path is not None:
        from governor.worlds.scenarios.plots import plot_series

        plot_series(result["_results"], plot_path)


def add_parser(bench: Subcommands) -> None:
    """`governor bench supervision`."""
    p = bench.add_parser(
        "supervision", help="supervision mechanisms against their ablations (simulated users)"
    )
    add_dataclass_args(p, SupervisionBenchConfig)
    add_backend_args(p)
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--plot", type=Path, help="write the series plot (PNG) here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    backend_config = backend_config_from_args(args)
    backend = None
    if configured(backend_config):
        backend = backend_from_config(backend_config)
        backend.check()
    result = run(dataclass_from_args(SupervisionBenchConfig, args), backend)
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
