"""How `governor bench supervision` shows its results: a table per scenario, conditions side by
side (the treatment and the ablation marked), the notes, the skipped scenarios and the timing."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from governor.report import print_table
from governor.worlds.scenarios.scenario import ScenarioResult


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
    """Every scenario's table and notes, the skipped ones, the agents and the decision time."""
    if "agents" in result:
        console.print(f"agent replies and LLM personas: {result['agents']}", markup=False)
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
