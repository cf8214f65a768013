"""Plots of the benchmarks (matplotlib, Agg backend: no screen needed)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from governor.runner import Episode
from governor.worlds.driving.grid_value import GridValue

OUTCOME_STYLE = {"success": "tab:green", "failure": "tab:red", "stopped": "tab:orange"}


def episode_xy(ep: Episode) -> np.ndarray:
    """The (x, y) positions visited by an episode, start and end included."""
    states = [s.observation["state"] for s in ep.trajectory.steps]
    states.append(ep.trajectory.observation["state"])
    return np.asarray(states, dtype=float)[:, :2]


def _slice(ax: Axes, gv: GridValue, heading: float, margin: float) -> None:
    p, spec = gv.params, gv.spec
    k = round((heading + math.pi) / (2 * math.pi) * spec.ntheta) % spec.ntheta
    xs = np.linspace(0.0, p.goal_x, spec.nx)
    ys = np.linspace(0.0, p.road_width, spec.ny)
    values = gv.V[:, :, k].T
    mesh = ax.pcolormesh(xs, ys, values, cmap="RdBu", vmin=-1.0, vmax=1.0, shading="auto")
    ax.contour(xs, ys, values, levels=[0.0], colors="k", linewidths=1.0)
    ax.contour(xs, ys, values, levels=[margin], colors="k", linewidths=0.8, linestyles="dotted")
    for cx, cy in p.obstacles:
        ax.add_patch(plt.Circle((cx, cy), p.obstacle_radius, fill=False, color="k", lw=1.5))
    ax.set_xlim(0.0, p.goal_x)
    ax.set_ylim(0.0, p.road_width)
    ax.set_aspect("equal")
    ax.set_xlabel("x (units of 10 m)")
    ax.set_ylabel("y")
    ax.figure.colorbar(mesh, ax=ax, fraction=0.025, label="safety value V")


def plot_driving(
    gv: GridValue,
    margin: float,
    examples: Mapping[str, Sequence[Episode]],
    path: Path,
) -> Path:
    """Safe-set slices at headings 0 and +90 degrees, with example trajectories on the first.

    ``examples`` maps a label (e.g. "erratic, unguarded") to episodes to draw; line colour says
    the outcome (green success, red failure, orange stopped).
    """
    fig, axes = plt.subplots(2, 1, figsize=(11, 6.5), constrained_layout=True)
    for ax, heading, title in (
        (axes[0], 0.0, "heading 0° (along the track)"),
        (axes[1], math.pi / 2, "heading +90° (toward the left edge)"),
    ):
        _slice(ax, gv, heading, margin)
        ax.set_title(f"safe set (V > 0, solid; V > margin {margin:.3f}, dotted) at {title}")
    styles = ["-", "--", ":", "-."]
    for (label, episodes), style in zip(examples.items(), styles, strict=False):
        for j, ep in enumerate(episodes):
            xy = episode_xy(ep)
            colour = OUTCOME_STYLE.get(ep.outcome, "tab:gray")
            axes[0].plot(
                xy[:, 0], xy[:, 1], style, color=colour, lw=1.6, label=label if j == 0 else None
            )
            axes[0].plot(xy[0, 0], xy[0, 1], "o", color="k", ms=3)
    if examples:
        axes[0].legend(loc="upper right", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
