"""A simulated household over one afternoon and evening: offline, stochastic, seeded.

Not a model of any real family: stated dynamics to exercise engagement gating (the journal
paper, section 6.2). Ticks of 15 minutes from 16:00 to 22:00.

- The learner comes home at ``U(16, 19.5)`` h and, with probability 0.3, leaves for an errand of
  an hour starting at ``U(17, 20)`` h.
- Up to two other household members arrive at ``U(16, 20)`` h each (each with probability 0.6).
  While anyone else is home, conversation or media runs as a two-state chain (starts with
  probability 0.25 per tick, stops with 0.35).
- With probability 0.25 the learner is reluctant all day: every acceptance probability is
  multiplied by 0.2.
- Affect: a day baseline ``N(0.15, 0.25)``, an AR(1) walk (rho 0.8, noise 0.15) and, with
  probability 0.04 per tick, a bad moment of -0.6; clipped to [-1, 1].

Ground truth: starting training is appropriate iff the learner is home, nobody is talking, the
learner's affect is at least :data:`UPSET` and the hour is inside the training window. The
sensors the supervisor reads are noisy: each person is missed with probability 0.1, the audio
classifier flips with probability 0.1, and the affect estimate adds ``N(0, 0.15)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

START_H, END_H, TICK_H = 16.0, 22.0, 0.25
WINDOW = (17.0, 21.0)
UPSET = -0.3
TICKS = int((END_H - START_H) / TICK_H)


@dataclass(frozen=True)
class Moment:
    """The true state of the household at one tick, and what the sensors report."""

    hour: float
    home: bool
    others: int
    talking: bool
    affect: float
    seen_people: int
    heard_talking: bool
    affect_estimate: float
    accept_draw: float
    reluctant: bool = False

    @property
    def appropriate(self) -> bool:
        in_window = WINDOW[0] <= self.hour < WINDOW[1]
        return in_window and self.home and not self.talking and self.affect >= UPSET

    def observation(self) -> dict[str, float | bool]:
        """The raw signals the supervisor's classifiers read."""
        return {
            "hour": self.hour,
            "people": self.seen_people,
            "others_talking": self.heard_talking,
            "affect": self.affect_estimate,
        }


def day(seed: int) -> list[Moment]:
    """One seeded day, tick by tick."""
    rng = np.random.default_rng(seed)
    hours = START_H + TICK_H * np.arange(TICKS)
    arrive = rng.uniform(16.0, 19.5)
    errand = rng.uniform(17.0, 20.0) if rng.random() < 0.3 else None
    others_at = [rng.uniform(16.0, 20.0) for _ in range(2) if rng.random() < 0.6]
    base = rng.normal(0.15, 0.25)
    reluctant = bool(rng.random() < 0.25)
    u = rng.random((TICKS, 6))
    noise = rng.normal(0.0, 1.0, (TICKS, 2))
    out, talking, walk = [], False, 0.0
    for i, h in enumerate(hours):
        home = h >= arrive and not (errand is not None and errand <= h < errand + 1.0)
        others = sum(1 for a in others_at if h >= a)
        talking = others > 0 and (u[i, 0] >= 0.35 if talking else u[i, 0] < 0.25)
        walk = 0.8 * walk + 0.15 * noise[i, 0] + (-0.6 if u[i, 1] < 0.04 else 0.0)
        affect = float(np.clip(base + walk, -1.0, 1.0))
        people = sum(1 for k in range(int(home) + others) if u[i, 2 + min(k, 1)] >= 0.1)
        heard = talking if u[i, 4] >= 0.1 else not talking
        estimate = float(np.clip(affect + 0.15 * noise[i, 1], -1.0, 1.0))
        out.append(
            Moment(
                float(h), home, others, talking, affect, people, heard, estimate, float(u[i, 5]),
                reluctant,
            )
        )  # fmt: skip
    return out
