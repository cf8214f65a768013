"""The small-talk benchmark's picture: per-feature distributions and likeness, human vs bots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from governor.overlays.features.base import DEFAULT_RESOURCES
from governor.worlds.smalltalk.metrics import CRITERIA, feature_table

COLOURS = {"human": "tab:gray", "base": "tab:red", "observer": "tab:blue"}
SHOWN = ("word_count", "tone", "specificity", "coherence")
UNITS = {
    "word_count": "words in the reply",
    "tone": "VADER compound sentiment (-1 to 1)",
    "specificity": "specificity score",
    "coherence": "coherence with the last turn",
}


def plot_smalltalk(result: dict[str, Any], path: Path) -> Path:
    """Empirical CDFs of four features (human, base, observer) and the likeness bars."""
    series: dict[str, dict[str, np.ndarray]] = {
        "human": {f: np.asarray(v, dtype=float) for f, v in result["_human"].items()}
    }
    for condition, convs in result["_runs"].items():
        pairs = [(t.context, t.reply) for c in convs for t in c if t.reply is not None]
        series[condition] = feature_table(pairs, SHOWN, result.get("_resources", DEFAULT_RESOURCES))
    fig, grid = plt.subplots(2, 3, figsize=(13, 7.5), constrained_layout=True)
    axes = list(grid.ravel())
    for ax, feature in zip(axes, SHOWN, strict=False):
        for label, values in series.items():
            v = np.sort(values[feature])
            if len(v):
                ax.step(
                    v,
                    np.arange(1, len(v) + 1) / len(v),
                    where="post",
                    label=label,
                    color=COLOURS[label],
                )
        ax.set_title(CRITERIA[feature])
        ax.set_xlabel(UNITS.get(feature, feature))
        ax.set_ylabel("share of replies at or below")
        if feature == "word_count":
            ax.set_xlim(0, np.percentile(series["human"][feature], 99) * 2 or 1)
    axes[0].legend(fontsize=8)
    ax = axes[len(SHOWN)]
    x = np.arange(len(CRITERIA))
    for k, c in enumerate(result["conversations"]):
        heights = [c["likeness"][f] for f in CRITERIA]
        ax.bar(
            x + (k - 0.5) * 0.4, heights, 0.4, label=c["condition"], color=COLOURS[c["condition"]]
        )
    ax.set_xticks(x, list(CRITERIA.values()), rotation=30)
    ax.set_title("distance to humans (lower: closer)")
    ax.set_ylabel("W1 / human sd")
    ax.legend(fontsize=8)
    for spare in axes[len(SHOWN) + 1 :]:
        spare.axis("off")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
