"""A simulated student in a de-escalation room (RESET-like): offline, stochastic, seeded.

Not a model of any real child: stated dynamics chosen to exercise supervision. Escalation
``e`` in [0, 1] (crisis above :data:`CRISIS`) moves each step by

    e' = clip(e + drift + demand + activity + fixation + noise + spike, 0, 1)

- drift ``KAPPA * (BASELINE - e)``: slow return toward a mildly unsettled baseline;
- demand ``ALPHA * (d - D0) * (0.5 + e)``: the reply's interaction demand ``d`` (the ``demand``
  feature; 0 when nothing is said) above ``D0`` raises escalation, more so when escalated;
- activity: the mode's effect at this escalation (:func:`activity_effect`): small talk calms a
  calm student but agitates an escalated one, breathing calms from 0.3 up, a creative task
  calms in the middle band and overloads above 0.6, silence calms a little, the crisis protocol
  (staff join) calms most; every activity's effect fades with steps spent in it (habituation);
- fixation: while perseverating on a topic, +0.03 per step; it starts with probability 0.08 per
  step in the band [0.4, 0.8] and stops with probability 0.6 after an interruption or a
  switch to breathing or creative, 0.1 otherwise;
- noise ``N(0, 0.03)`` and, with probability 0.06, a spike ``U(0.15, 0.35)``.

What the student says follows ``e`` (calm, unsettled, upset, escalated lines whose VADER score
falls with the band); above 0.85 it makes a crisis statement with probability 0.3; while
fixated it repeats its fixation line; when the reply was demanding (d > 0.3) and e > 0.6 it
refuses with probability 0.4. Every random number of a step is drawn up front, so two
conditions meet the same student, draw for draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CRISIS = 0.8
BASELINE, KAPPA = 0.3, 0.05
ALPHA, D0 = 0.08, 0.3
LINES = {
    "calm": ("That was kind of fun.", "I feel a bit better.", "Okay, I'm okay.", "Yeah, sure."),
    "unsettled": ("Whatever.", "I don't want to talk.", "I don't know.", "Fine."),
    "upset": ("This is stupid. I hate this.", "No. Stop asking me.", "Go away. I'm mad."),
    "escalated": ("Leave me alone! I hate this place!", "I HATE YOU! GO AWAY!", "Stop it! Stop!"),
}
CRISIS_LINES = ("I want to hurt myself.", "I'm going to hit someone!")
FIXATION_LINES = ("I want my tablet back.", "I want my tablet back now.", "Give me my tablet back.")
REFUSAL = "No."


def band(e: float) -> str:
    return "calm" if e < 0.3 else "unsettled" if e < 0.55 else "upset" if e < 0.8 else "escalated"


def activity_effect(mode: str | None, e: float, steps_in_mode: int) -> float:
    """The change in escalation one step of ``mode`` brings at escalation ``e``."""
    if mode is None:
        return 0.0
    if mode == "small_talk":
        base = -0.03 if e < 0.4 else 0.03 * (e - 0.4) / 0.6
    elif mode == "breathing":
        base = -0.08 if e >= 0.3 else 0.01
    elif mode == "creative":
        base = -0.06 if 0.15 <= e < 0.6 else (0.05 if e >= 0.6 else 0.0)
    elif mode == "silence":
        base = -0.02
    elif mode == "crisis":
        base = -0.12
    else:
        base = 0.0
    fade = math.exp(-steps_in_mode / 10.0) if base < 0 else 1.0
    return base * fade


@dataclass(frozen=True)
class Draws:
    """The random numbers of one step, drawn whether or not they are used."""

    noise: float
    spike: float  # 0 when no spike
    crisis: float
    fixate: float
    unfix: float
    refuse: float
    line: int


class Student:
    """One seeded student; :meth:`respond` advances it by one step."""

    def __init__(self, seed: int, steps: int, *, start: float | None = None) -> None:
        rng = np.random.default_rng(seed)
        self.e = float(rng.uniform(0.45, 0.75)) if start is None else start
        spikes = np.where(rng.random(steps) < 0.06, rng.uniform(0.15, 0.35, steps), 0.0)
        noise = rng.normal(0.0, 0.03, steps)
        u = rng.random((steps, 4))
        lines = rng.integers(0, 1_000, steps)
        self.draws = [
            Draws(
                float(noise[i]), float(spikes[i]), float(u[i, 0]), float(u[i, 1]),
                float(u[i, 2]), float(u[i, 3]), int(lines[i]),
            )
            for i in range(steps)
        ]  # fmt: skip
        self.t = 0
        self.fixated = False
        self.history = [self.e]

    def opening(self) -> str:
        """What the student says on arrival."""
        return self._line(band(self.e), 0)

    def respond(
        self, mode: str | None, demand: float, steps_in_mode: int, interrupted: bool
    ) -> tuple[str, bool]:
        """Advance one step under the agent's ``mode`` and reply ``demand``; returns what the
        student says and whether it refused."""
        d = self.draws[min(self.t, len(self.draws) - 1)]
        self.t += 1
        e = self.e
        if self.fixated:
            calming = interrupted or mode in ("breathing", "creative")
            self.fixated = d.unfix >= (0.6 if calming else 0.1)
        elif 0.4 <= e <= 0.8 and d.fixate < 0.08:
            self.fixated = True
        change = KAPPA * (BASELINE - e) + ALPHA * (demand - D0) * (0.5 + e)
        change += activity_effect(mode, e, steps_in_mode) + (0.03 if self.fixated else 0.0)
        self.e = min(1.0, max(0.0, e + change + d.noise + d.spike))
        self.history.append(self.e)
        if self.e > 0.85 and d.crisis < 0.3:
            return CRISIS_LINES[d.line % len(CRISIS_LINES)], False
        if demand > 0.3 and self.e > 0.6 and d.refuse < 0.4:
            return REFUSAL, True
        if self.fixated:
            return FIXATION_LINES[d.line % len(FIXATION_LINES)], False
        return self._line(band(self.e), d.line), False

    @staticmethod
    def _line(name: str, k: int) -> str:
        options = LINES[name]
        return options[k % len(options)]
