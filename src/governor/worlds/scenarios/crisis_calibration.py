"""Calibrating the crisis lookahead's threshold on calm and at-risk users it is not judged on.

A calibration run plays the calibration users (their own seed stream, see
:func:`~.crisis_episode.user`) against the single-step observer and against lookahead at every
threshold of :data:`THRESHOLDS` (the shares k/8 that 8 rollouts can reach). Its measures:

- the **false-trigger rate**, the calm users protocol rate: the share of calm users (starting
  risk below 0.35) for whom the crisis protocol starts at all;
- the share of at-risk users for whom it starts before any stated intent.

In these dynamics some calm users state intent after dismissive replies, and the single-step
observer starts the protocol for them then (never before), so no observer gets the calm rate to
zero. The budget is therefore stated against that floor: lookahead may start the protocol for at
most ``budget`` (10 %) more of the calm users than the single-step observer does. The calibrated
threshold is the most sensitive (lowest) one within the budget; when none is, the one with the
lowest calm rate, and the calibration says the budget was not met.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from governor.backends.base import Backend
from governor.worlds.scenarios.crisis_episode import Arm, Simulator, episode, summarize
from governor.worlds.scenarios.llm_agents import LLMTally
from governor.worlds.scenarios.scenario import Curve

THRESHOLDS = tuple(k / 8 for k in range(1, 9))
BUDGET = 0.10
OLD_THRESHOLD = 0.25


@dataclass(frozen=True)
class Calibration:
    """A threshold sweep on the calibration users and the threshold it chose."""

    simulator: Simulator
    users: int
    thresholds: tuple[float, ...]
    before: tuple[float, ...]  # at-risk users: protocol before stated intent
    calm: tuple[float, ...]  # calm users protocol rate (the false-trigger rate)
    floor: float  # the single-step observer's calm users protocol rate
    budget: float
    threshold: float
    met: bool
    rollouts_per_turn: float
    llm: LLMTally = field(default_factory=LLMTally)  # the calibration run's model calls

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def note(self) -> str:
        i = self.thresholds.index(self.threshold)
        verdict = "within" if self.met else "NOT within (no threshold is; the lowest calm rate)"
        return (
            f"calibration ({self.simulator} simulator, {self.users} calibration users, not the"
            f" evaluation users): threshold {self.threshold:g}, calm users protocol rate"
            f" {self.calm[i]:.3f} against the single-step observer's {self.floor:.3f}, {verdict}"
            f" the budget of +{self.budget:.2f}; at-risk protocol before intent {self.before[i]:.3f};"
            f" {self.llm.calls} LLM calls ({self.llm.failed} failed, {self.llm.unparsable}"
            " unparsable replies)"
        )


def single_step_floor(
    seed: int, users: int, backend: Backend | None = None
) -> tuple[float, LLMTally]:
    """The single-step observer's calm users protocol rate on the calibration users, and the
    model calls it took."""
    eps = [episode(Arm("single_step"), seed, i, backend, "calibration") for i in range(users)]
    llm = LLMTally()
    for e in eps:
        llm += e.llm
    return float(summarize(eps)["calm_protocol_rate"]), llm


def calibrate(
    simulator: Simulator,
    seed: int,
    users: int,
    floor: float,
    backend: Backend | None = None,
    *,
    thresholds: tuple[float, ...] = THRESHOLDS,
    budget: float = BUDGET,
) -> Calibration:
    """Sweep ``thresholds`` on ``users`` calibration users and choose one (see the module doc)."""
    before, calm, rollouts = [], [], []
    llm = LLMTally()
    for th in thresholds:
        arm = Arm("calibration", simulator, th)
        eps = [episode(arm, seed, i, backend, "calibration") for i in range(users)]
        for e in eps:
            llm += e.llm
        row = summarize(eps)
        before.append(row["protocol_before_escalation"])
        calm.append(row["calm_protocol_rate"])
        rollouts.append(row["rollouts_per_turn"])
    within = [th for th, c in zip(thresholds, calm, strict=True) if c <= floor + budget + 1e-9]
    chosen = min(within) if within else thresholds[calm.index(min(calm))]
    return Calibration(
        simulator,
        users,
        tuple(thresholds),
        tuple(before),
        tuple(calm),
        floor,
        budget,
        chosen,
        bool(within),
        sum(rollouts) / len(rollouts),
        llm,
    )


def sweep_curve(calibrations: list[Calibration]) -> Curve:
    """The sweep as a curve: both rates over the threshold, per simulator, the choices marked."""
    lines: dict[str, tuple[float, ...]] = {}
    marks = {f"old {OLD_THRESHOLD:g}": OLD_THRESHOLD}
    for c in calibrations:
        lines[f"at-risk: protocol before intent ({c.simulator})"] = c.before
        lines[f"calm: protocol rate ({c.simulator})"] = c.calm
        marks[f"calibrated {c.simulator}"] = c.threshold
    first = calibrations[0]
    lines["calm: single-step rate + budget"] = (first.floor + first.budget,) * len(first.thresholds)
    return Curve(
        "crisis: lookahead threshold sweep (calibration users)",
        "threshold (share of rollouts reaching intent that rejects)",
        "share of users",
        first.thresholds,
        lines,
        marks,
    )
