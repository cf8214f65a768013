"""The exact (privileged) safety value of the driving task, by value iteration on a grid.

The undiscounted safety Bellman equation V(s) = min(l(s), max_a Q(s, a)),
Q(s, a) = min(l(s'), V(s')), is iterated from V = l on a (nx, ny, ntheta) grid over
x in [0, goal_x], y in [0, road_width] and a periodic heading. s' comes from the environment's own
:func:`~governor.worlds.driving.env.step_states`; V(s') is interpolated trilinearly, except where s' fails
(l(s') < 0) or reaches the goal (x' >= goal_x, terminal): there Q = l(s').
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
import zipfile
from pathlib import Path

import numpy as np
from scipy import sparse
from tqdm import tqdm

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.worlds.driving.env import DrivingParams, margin, margin_at, step_states, wrap_angle

CACHE_FORMAT = 1
_FIXED = np.float32(1e9)  # added to the interpolated value of rows whose Q is fixed at l(s')
# Nodes on the goal line stand for states just before it (the limit from the left): only states
# with x < goal_x are ever interpolated, and V jumps at the goal line.
_GOAL_SIDE = 1e-9


@dataclasses.dataclass(frozen=True)
class GridSpec:
    """The grid and the stopping rule of the value iteration."""

    nx: int = option(101, "grid points over x in [0, goal_x]")
    ny: int = option(101, "grid points over y in [0, road_width]")
    ntheta: int = option(64, "grid points over the heading, periodic on [-pi, pi)")
    tol: float = option(1e-6, "stop when the largest change of V in one iteration is below this")
    max_iters: int = option(2000, "stop after this many iterations at the latest")

    def __post_init__(self) -> None:
        for name, low in (("nx", 4), ("ny", 4), ("ntheta", 4), ("max_iters", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name}: {expected(f'an integer >= {low}', value)}")
        check_range("tol", self.tol, 0.0, 1.0)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.nx, self.ny, self.ntheta)


def grid_states(params: DrivingParams, spec: GridSpec, goal_side: float = 0.0) -> np.ndarray:
    """All grid states, shape (nx, ny, ntheta, 3); the last x moved left by ``goal_side``."""
    xs = np.linspace(0.0, params.goal_x, spec.nx)
    xs[-1] -= goal_side
    ys = np.linspace(0.0, params.road_width, spec.ny)
    ths = -math.pi + 2 * math.pi * np.arange(spec.ntheta) / spec.ntheta
    return np.stack(np.meshgrid(xs, ys, ths, indexing="ij"), axis=-1)


def _corners(
    params: DrivingParams, spec: GridSpec, states: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices (M, 8) and trilinear weights (M, 8) of states (M, 3) inside the grid box."""
    fx = np.clip(states[:, 0] / params.goal_x * (spec.nx - 1), 0.0, spec.nx - 1)
    fy = np.clip(states[:, 1] / params.road_width * (spec.ny - 1), 0.0, spec.ny - 1)
    ft = (wrap_angle(states[:, 2]) + math.pi) / (2 * math.pi) * spec.ntheta
    i0 = np.minimum(fx.astype(np.int64), spec.nx - 2)
    j0 = np.minimum(fy.astype(np.int64), spec.ny - 2)
    k0 = np.floor(ft).astype(np.int64)
    wx, wy, wt = fx - i0, fy - j0, ft - k0
    k0 %= spec.ntheta
    k1 = (k0 + 1) % spec.ntheta
    index, weight = [], []
    for di, ax in ((0, 1 - wx), (1, wx)):
        for dj, ay in ((0, 1 - wy), (1, wy)):
            base = ((i0 + di) * spec.ny + (j0 + dj)) * spec.ntheta
            index += [base + k0, base + k1]
            weight += [ax * ay * (1 - wt), ax * ay * wt]
    return np.stack(index, axis=1), np.stack(weight, axis=1)


def build_transition(
    params: DrivingParams, spec: GridSpec
) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
    """The stacked (3N x N) interpolation matrix P, l(s') and the fixed-row offset (both 3N).

    Row ``a * N + s`` interpolates V at the next state of grid state s under action a; a row whose
    next state fails or reaches the goal is empty, and its offset makes Q = l(s') there.
    """
    states = grid_states(params, spec, _GOAL_SIDE * params.goal_x).reshape(-1, 3)
    nxt = step_states(params, states[None, :, :], np.arange(3)[:, None]).reshape(-1, 3)
    level = margin(params, nxt)
    fixed = (level < 0.0) | (nxt[:, 0] >= params.goal_x)
    index, weight = _corners(params, spec, nxt[~fixed])
    counts = np.where(fixed, 0, 8)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = states.shape[0]
    matrix = sparse.csr_matrix(
        (weight.astype(np.float32).ravel(), index.astype(np.int32).ravel(), indptr),
        shape=(3 * n, n),
    )
    offset = np.where(fixed, _FIXED, np.float32(0.0)).astype(np.float32)
    return matrix, level.astype(np.float32), offset


def value_iteration(
    params: DrivingParams, spec: GridSpec, progress: bool = True
) -> tuple[np.ndarray, int]:
    """The converged V (float32, spec.shape) and the number of iterations it took."""
    states = grid_states(params, spec).reshape(-1, 3)
    exact = margin(params, states)
    terminal, level = exact < 0.0, exact.astype(np.float32)
    matrix, next_level, offset = build_transition(params, spec)
    n = level.shape[0]
    value = level.copy()
    iters = 0
    with tqdm(
        total=spec.max_iters, desc="safety value", disable=None if progress else True, leave=False
    ) as bar:
        while iters < spec.max_iters:
            q = np.minimum(next_level, matrix @ value + offset).reshape(3, n).max(axis=0)
            new = np.where(terminal, level, np.minimum(level, q))
            change = float(np.abs(new - value).max())
            value, iters = new, iters + 1
            bar.update(1)
            bar.set_postfix(change=f"{change:.2e}")
            if change < spec.tol:
                break
    return value.reshape(spec.shape), iters


class GridValue:
    """A converged grid safety value and its Q at continuous states."""

    def __init__(self, params: DrivingParams, spec: GridSpec, value: np.ndarray, iters: int = 0):
        if value.shape != spec.shape:
            raise ConfigError(f"grid value: {expected(f'shape {spec.shape}', value.shape)}")
        self.params, self.spec, self.iters = params, spec, iters
        self.V = np.ascontiguousarray(value, dtype=np.float32)
        self._flat = self.V.reshape(-1).data  # indexing it yields Python floats quickly
        self._sx = (spec.nx - 1) / params.goal_x
        self._sy = (spec.ny - 1) / params.road_width
        self._st = spec.ntheta / (2 * math.pi)
        self._turns = [params.dt * u for u in params.controls.tolist()]

    @property
    def resolution(self) -> float:
        """A margin covering interpolation error: a quarter of the cell diagonal.

        The heading side of the cell counts as the arc ``turning_radius * dtheta``. Tuned with
        the exact search: at 101x101x64 it is 0.039, and the largest V(s) of an unsafe state among
        100,000 uniform road states was 0.029.
        """
        dx = self.params.goal_x / (self.spec.nx - 1)
        dy = self.params.road_width / (self.spec.ny - 1)
        arc = 2 * math.pi / self.spec.ntheta * self.params.turning_radius
        return 0.25 * math.sqrt(dx * dx + dy * dy + arc * arc)

    def q(self, state: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        """Q(s, a) for the three actions at one continuous state (plain scalar arithmetic)."""
        p, spec = self.params, self.spec
        x, y, th = float(state[0]), float(state[1]), float(state[2])
        step = p.dt * p.speed
        x1, y1 = x + step * math.cos(th), y + step * math.sin(th)
        level = margin_at(p, x1, y1)
        if level < 0.0 or x1 >= p.goal_x:
            return np.array([level, level, level])
        fx, fy = min(x1 * self._sx, spec.nx - 1.0), min(y1 * self._sy, spec.ny - 1.0)
        i0, j0 = min(int(fx), spec.nx - 2), min(int(fy), spec.ny - 2)
        wx, wy = fx - i0, fy - j0
        nt, ny, v = spec.ntheta, spec.ny, self._flat
        bases = (
            ((i0 * ny + j0) * nt, (1 - wx) * (1 - wy)),
            (((i0 + 1) * ny + j0) * nt, wx * (1 - wy)),
            ((i0 * ny + j0 + 1) * nt, (1 - wx) * wy),
            (((i0 + 1) * ny + j0 + 1) * nt, wx * wy),
        )
        out = []
        for turn in self._turns:
            ft = ((th + turn + math.pi) % (2 * math.pi)) * self._st
            k0 = int(ft)
            wt = ft - k0
            k0 %= nt
            k1 = (k0 + 1) % nt
            total = 0.0
            for base, w in bases:
                total += w * ((1 - wt) * v[base + k0] + wt * v[base + k1])
            out.append(min(level, total))
        return np.array(out)

    def q_batch(self, states: np.ndarray) -> np.ndarray:
        """Q(s, a) for many states (N, 3) at once: shape (N, 3)."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
        nxt = step_states(self.params, states[:, None, :], np.arange(3)[None, :]).reshape(-1, 3)
        level = margin(self.params, nxt)
        fixed = (level < 0.0) | (nxt[:, 0] >= self.params.goal_x)
        return np.where(fixed, level, np.minimum(level, self.interpolate(nxt))).reshape(-1, 3)

    def interpolate(self, states: np.ndarray) -> np.ndarray:
        """The grid value trilinearly interpolated at states (N, 3) (no terminal handling)."""
        index, weight = _corners(self.params, self.spec, np.asarray(states, dtype=np.float64))
        return (self.V.reshape(-1)[index] * weight).sum(axis=1)

    def value(self, state: np.ndarray | tuple[float, float, float]) -> float:
        """V(s) = min(l(s), max_a Q(s, a)); l(s) at failed and goal states (terminal)."""
        x, y = float(state[0]), float(state[1])
        level = margin_at(self.params, x, y)
        if level < 0.0 or x >= self.params.goal_x:
            return level
        return min(level, float(self.q(state).max()))

    def values(self, states: np.ndarray) -> np.ndarray:
        """:meth:`value` for many states (N, 3): shape (N,)."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
        level = margin(self.params, states)
        terminal = (level < 0.0) | (states[:, 0] >= self.params.goal_x)
        return np.where(terminal, level, np.minimum(level, self.q_batch(states).max(axis=1)))


def cache_path(params: DrivingParams, spec: GridSpec, cache_dir: str | Path | None = None) -> Path:
    """Where the cached value for ``params`` and ``spec`` lives."""
    if cache_dir is None:
        cache_dir = os.environ.get("GOVERNOR_CACHE_DIR") or Path.home() / ".cache" / "governor"
    grid = f"{spec.nx}x{spec.ny}x{spec.ntheta}-{spec.tol:g}-{spec.max_iters}"
    return Path(cache_dir) / f"driving-value-v{CACHE_FORMAT}-{params.key()}-{grid}.npz"


def load_or_compute(
    params: DrivingParams,
    spec: GridSpec | None = None,
    cache_dir: str | Path | None = None,
    progress: bool = True,
) -> tuple[GridValue, float, bool]:
    """The grid value, the seconds it took to load or compute, and whether it came from the cache.

    A cache file that cannot be read is computed again and overwritten; a cache directory that
    cannot be written is skipped.
    """
    spec = spec if spec is not None else GridSpec()
    path = cache_path(params, spec, cache_dir)
    start = time.perf_counter()
    try:
        with np.load(path) as data:
            value, iters = data["V"], int(data["iters"])
        return GridValue(params, spec, value, iters), time.perf_counter() - start, True
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, ConfigError):
        pass
    value, iters = value_iteration(params, spec, progress=progress)
    seconds = time.perf_counter() - start
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, V=value, iters=np.int64(iters))
        os.replace(tmp, path)
    except OSError:  # an unwritable cache costs the next run time, never this one's result
        tmp.unlink(missing_ok=True)
    return GridValue(params, spec, value, iters), seconds, False
