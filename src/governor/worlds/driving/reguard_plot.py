"""Learned versus exact safe sets of the driving task, at two headings (the paper's Figure 6)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from governor.worlds.driving.env import margin
from governor.worlds.driving.grid_value import GridValue

Values = Callable[[np.ndarray], np.ndarray]  # states (N, 3) -> V (N,)
HEADINGS = ((0.0, "heading 0°"), (math.pi / 2, "heading +90°"))


def plot_safe_sets(
    gv: GridValue, learned: Mapping[str, Values], path: Path, resolution: int = 121
) -> Path:
    """One column per value (exact first), one row per heading; the exact boundary on each."""
    p = gv.params
    xs = np.linspace(0.0, p.goal_x, resolution)
    ys = np.linspace(0.0, p.road_width, max(2, resolution * 3 // 10))
    gx, gy = np.meshgrid(xs, ys)
    columns: dict[str, Values] = {"exact (grid)": gv.values, **learned}
    fig, axes = plt.subplots(
        len(HEADINGS),
        len(columns),
        figsize=(4.2 * len(columns), 2.0 * len(HEADINGS) + 0.6),
        constrained_layout=True,
        squeeze=False,
    )
    for row, (heading, label) in enumerate(HEADINGS):
        states = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, heading)])
        exact = gv.values(states).reshape(gx.shape)
        live = margin(p, states).reshape(gx.shape) >= 0.0  # failed states are no one's question
        for col, (name, values) in enumerate(columns.items()):
            ax = axes[row][col]
            v = np.asarray(values(states), dtype=float).reshape(gx.shape)
            shown = np.ma.masked_where(~live, v)
            ax.set_facecolor("0.75")
            mesh = ax.pcolormesh(xs, ys, shown, cmap="RdBu", vmin=-1.0, vmax=1.0, shading="auto")
            ax.contour(xs, ys, v, levels=[0.0], colors="k", linewidths=1.0)
            if col:
                ax.contour(
                    xs, ys, exact, levels=[0.0], colors="k", linewidths=0.8, linestyles="dotted"
                )
                agree = float(((v > 0) == (exact > 0))[live].mean())
                ax.set_title(f"{name}, {label}: sign agrees on {agree:.1%}", fontsize=9)
            else:
                ax.set_title(f"{name}, {label}", fontsize=9)
            for cx, cy in p.obstacles:
                ax.add_patch(plt.Circle((cx, cy), p.obstacle_radius, fill=False, color="k"))
            ax.set_aspect("equal")
            ax.set_xlim(0.0, p.goal_x)
            ax.set_ylim(0.0, p.road_width)
            ax.set_xlabel(f"x along the road (units of {p.unit_m:g} m)", fontsize=8)
            ax.set_ylabel("y across the road", fontsize=8)
    fig.colorbar(mesh, ax=axes, shrink=0.8, label="safety value V (distance to failure)")
    fig.suptitle(
        "safe sets: blue V > 0; solid: this value's boundary; dotted: the exact one; grey: failed\n"
        "panel agreement: live grid points at that heading (not the held-out states of the text)",
        fontsize=9,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
