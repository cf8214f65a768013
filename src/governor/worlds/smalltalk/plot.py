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


def plot_smalltalk(result: dict[str, Any], path: Path) -> Path:
    """Empirical CDFs of four features (human, base, observer) and the likeness bars."""
    series: dict[str, dict[str, np.ndarray]] = {
        "human": {f: np.asarray(v, dtype=float) for f, v in result["_human"].items()}
    }
    for condition, convs in result["_runs"].items():
        pairs = [(t.context, t.reply) for c in convs for t in c if t.reply is not None]
        series[condition] = feature_table(pairs, SHOWN, result.get("_resources", DEFAULT_RESOURCES))
    fig, axes = plt.subplots(1, len(SHOWN) + 1, figsize=(17, 3.6), constrained_layout=True)
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
        ax.set_title(f"{CRITERIA[feature]} ({feature})")
        ax.set_ylabel("share of replies")
        if feature == "word_count":
            ax.set_xlim(0, np.percentile(series["human"][feature], 99) * 2 or 1)
    axes[0].legend(fontsize=8)
    ax = axes[-1]
    x = np.arange(len(CRITERIA))
    for k, c in enumerate(result["conversations"]):
        heights = [c["likeness"][f] for f in CRITERIA]
        ax.bar(
            x + (k - 0.5) * 0.4, heights, 0.4, label=c["condition"], color=COLOURS[c["condition"]]
        )
    ax.set_xticks(x, list(CRITERIA.values()), rotation=30)
    ax.set_title("distance to humans (lower: closer)")
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
