"""The supervision bench's plot: each scenario's series per condition over time (matplotlib,
Agg backend: no screen needed)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from governor.worlds.scenarios.scenario import ScenarioResult


def plot_series(results: Mapping[str, ScenarioResult], path: Path) -> None:
    """One panel per scenario that has series (the treatment bold, the ablation dashed), then one
    per curve (a sweep), its marks as vertical lines."""
    shown = [r for r in results.values() if r.series]
    curves = [c for r in results.values() for c in r.curves]
    panels = len(shown) + len(curves)
    if not panels:
        return
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 3.8), squeeze=False)
    for ax, r in zip(axes[0], shown, strict=False):
        for cond, values in r.series.items():
            width = 2.5 if cond == r.treatment else 1.2
            dash = "--" if cond == r.ablation else "-"
            ax.plot(range(len(values)), values, label=cond, lw=width, ls=dash)
        ax.set_title(r.name)
        ax.set_xlabel("step")
        ax.set_ylabel(r.series_label or r.metric)
        ax.legend(fontsize=7)
    for ax, c in zip(axes[0][len(shown) :], curves, strict=True):
        for name, values in c.lines.items():
            ax.plot(c.x, values, label=name, marker="o", ms=3)
        for name, x in c.marks.items():
            ax.axvline(x, ls=":", lw=1, color="grey")
            ax.annotate(
                name, (x, 0.02), fontsize=6, rotation=90, xycoords=("data", "axes fraction")
            )
        ax.set_title(c.name)
        ax.set_xlabel(c.x_label)
        ax.set_ylabel(c.y_label)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
