"""The supervision bench's plot: each scenario's series per condition over time (matplotlib,
Agg backend: no screen needed)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from governor.worlds.supervision.scenario import ScenarioResult


def plot_series(results: Mapping[str, ScenarioResult], path: Path) -> None:
    """One panel per scenario that has series; the treatment bold, the ablation dashed."""
    shown = [r for r in results.values() if r.series]
    if not shown:
        return
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 3.8), squeeze=False)
    for ax, r in zip(axes[0], shown, strict=True):
        for cond, values in r.series.items():
            width = 2.5 if cond == r.treatment else 1.2
            dash = "--" if cond == r.ablation else "-"
            ax.plot(range(len(values)), values, label=cond, lw=width, ls=dash)
        ax.set_title(r.name)
        ax.set_xlabel("step")
        ax.set_ylabel(r.series_label or r.metric)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
