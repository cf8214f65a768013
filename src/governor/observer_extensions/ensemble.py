"""Observer ensembles (extension 3): several observers judge independently, the arbiter's modes
combine them, and disagreement or small margins send the step down the conservative path.

An :class:`ObserverEnsemble` is one constraint of the loop holding several :class:`Member`
observers (each a set of constraints, judged as their intersection, without seeing the others'
verdicts). Their verdicts are combined by the :class:`~governor.arbiter.Arbiter`'s own modes
(``intersection``, ``majority``, ``weighted`` with a ``quorum``) over a one-candidate table:

- combined rejection: the ensemble rejects, naming the members that rejected;
- combined admission with a *risk signal*: members disagree, or every admitting member's margin
  is below ``near_margin``: the ensemble admits with confidence (weighted share of members that
  agree) x (smallest margin / near_margin, capped at 1) and a descriptor beginning ``risk
  signal:``. With ``ObserverConfig.min_confidence`` above it (:func:`ensemble_config` sets it),
  the step is rejected as ``low_confidence`` and the :class:`ConservativeFallback` asks a
  clarifying question or says it is not sure (:func:`risk_signal` reads the signal back from a
  decision);
- otherwise the ensemble admits.

Weights are learned from corrections (multiplicative weights): a step whose ``info`` carries
``correction`` (True: the executed reply was fine; False: it should have been refused) multiplies
the weight of every member that judged otherwise by (1 - ``learning_rate``), then rescales the
weights to mean 1. They live in the trajectory's memory (JSON-safe), one session each.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from governor.arbiter import Arbiter
from governor.config import ARBITRATION_MODES, ObserverConfig, check_range, option
from governor.core import Candidate, Constraint, Decision, Fallback, Step, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.overlays.features.dialogue import as_dialogue, last

RISK = "risk signal:"


@dataclass(frozen=True)
class Member:
    """One observer of the ensemble: a name and its constraints (judged as their intersection)."""

    name: str
    constraints: tuple[Constraint, ...] = field(default=())

    def judge(self, traj: Trajectory, action: Any) -> Verdict:
        """This observer's verdict; a check that raises makes it reject (fail closed)."""
        verdicts = []
        for c in self.constraints:
            try:
                verdicts.append(c.check(traj, action))
            except Exception as exc:
                verdicts.append(Verdict.failed(c.name, exc))
        bad = [v for v in verdicts if not v.admissible]
        margins = [v.margin for v in verdicts if v.margin is not None]
        margin = min(margins) if margins else None
        if bad:
            text = "; ".join(v.descriptor or f"{v.constraint} rejects" for v in bad)
            return Verdict.reject(self.name, max(v.deviation for v in bad), text, margin=margin)
        return Verdict.allow(self.name, margin=margin)


@dataclass(frozen=True)
class EnsembleConfig:
    """How the ensemble combines and when it signals risk."""

    arbitration: Literal["intersection", "majority", "weighted"] = option(
        "majority", "how member verdicts combine (the arbiter's modes)"
    )
    quorum: float = option(0.5, "weighted: share of the total weight a candidate needs")
    near_margin: float = option(
        0.0, "risk when every admitting member's margin is below this (0: off)"
    )
    min_confidence: float = option(0.99, "the loop's tau: a risk signal below it goes conservative")
    learning_rate: float = option(0.3, "weight lost by a member that disagreed with a correction")

    def __post_init__(self) -> None:
        if self.arbitration not in ARBITRATION_MODES:
            raise ConfigError(
                f"arbitration: {expected(' or '.join(ARBITRATION_MODES), self.arbitration)}"
            )
        check_range("quorum", self.quorum, 0.0, 1.0)
        check_range("near_margin", self.near_margin, 0.0, 1e9)
        check_range("min_confidence", self.min_confidence, 0.0, 1.0)
        check_range("learning_rate", self.learning_rate, 0.0, 0.99)


class ObserverEnsemble(Constraint):
    """Several observers as one constraint (see the module doc)."""

    def __init__(
        self,
        members: Sequence[Member],
        config: EnsembleConfig | None = None,
        *,
        weights: Mapping[str, float] | None = None,
        name: str = "ensemble",
    ) -> None:
        names = [m.name for m in members]
        if len(members) < 2 or len(set(names)) != len(names):
            raise ConfigError(f"ensemble members: {expected('two or more, uniquely named', names)}")
        self.members, self.name = tuple(members), name
        self.config = config or EnsembleConfig()
        self.start_weights = {n: float((weights or {}).get(n, 1.0)) for n in names}

    def initial_state(self, observation: Any) -> dict[str, Any]:
        inner = {c.name: c.initial_state(observation) for m in self.members for c in m.constraints}
        return {"weights": dict(self.start_weights), "corrections": 0, "state": inner}

    def _state(self, traj: Trajectory) -> dict[str, Any]:
        state = traj.memory.get(self.name)
        return dict(state) if isinstance(state, Mapping) else self.initial_state(traj.observation)

    def judge(self, traj: Trajectory, action: Any) -> tuple[Verdict, ...]:
        """Each member's verdict on ``action``, made independently."""
        inner = dataclasses.replace(traj, memory=self._state(traj)["state"])
        return tuple(m.judge(inner, action) for m in self.members)

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        cfg, weights = self.config, self._state(traj)["weights"]
        row = self.judge(traj, action)
        arbiter = Arbiter(
            ObserverConfig(arbitration=cfg.arbitration, weights=weights, quorum=cfg.quorum)
        )
        admitted = arbiter.arbitrate([Candidate(action)], [row]).chosen is not None
        yes = [v for v in row if v.admissible]
        no = [v for v in row if not v.admissible]
        if not admitted:
            text = "; ".join(f"{v.constraint}: {v.descriptor}" for v in no)
            return Verdict.reject(
                self.name, max(v.deviation for v in no), f"ensemble rejects ({text})"
            )
        total = sum(weights.get(v.constraint, 1.0) for v in row) or 1.0
        agree = sum(weights.get(v.constraint, 1.0) for v in yes) / total
        margins = [v.margin for v in yes if v.margin is not None]
        closeness = 1.0
        risks = []
        if no:
            risks.append(
                f"observers disagree ({', '.join(v.constraint for v in yes)} admit;"
                f" {', '.join(v.constraint for v in no)} reject)"
            )
        if cfg.near_margin > 0 and margins and max(margins) < cfg.near_margin:
            closeness = max(0.0, min(margins)) / cfg.near_margin
            risks.append(f"every observer is near its boundary (margins below {cfg.near_margin:g})")
        if not risks:
            return Verdict.allow(self.name, margin=min(margins) if margins else None)
        text = f"{RISK} {'; '.join(risks)}: take the conservative path"
        return Verdict.allow(self.name, confidence=agree * closeness, descriptor=text)

    def commit(self, traj: Trajectory, step: Step) -> Any:
        state = self._state(traj)
        inner = dataclasses.replace(traj, memory=state["state"])
        state["state"] = {
            c.name: c.commit(inner, step) for m in self.members for c in m.constraints
        }
        correction = step.info.get("correction") if isinstance(step.info, Mapping) else None
        if isinstance(correction, bool):
            state = self.learn(state, self.judge(traj, step.action), correction)
        return state

    def learn(self, state: Mapping[str, Any], row: Sequence[Verdict], fine: bool) -> dict[str, Any]:
        """Multiplicative weights: members that judged the corrected reply otherwise lose weight."""
        keep = 1.0 - self.config.learning_rate
        weights = {
            v.constraint: state["weights"].get(v.constraint, 1.0)
            * (1.0 if v.admissible == fine else keep)
            for v in row
        }
        scale = len(weights) / (sum(weights.values()) or 1.0)
        new = dict(state)
        new["weights"] = {k: w * scale for k, w in weights.items()}
        new["corrections"] = int(state.get("corrections", 0)) + 1
        return new


def ensemble_config(config: EnsembleConfig, **loop: Any) -> ObserverConfig:
    """The loop's configuration for an ensemble: its ``min_confidence`` set to the ensemble's."""
    return ObserverConfig(min_confidence=config.min_confidence, **loop)


def risk_signal(decision: Decision) -> str | None:
    """The ensemble's risk signal behind a conservative decision, or None."""
    for attempt in reversed(decision.attempts):
        for row in attempt.verdicts:
            for v in row:
                if v.descriptor.startswith(RISK):
                    return v.descriptor
    return None


_QUESTION = re.compile(r"\?\s*$")


class ConservativeFallback(Fallback):
    """The conservative path: a clarifying question after a question, else "I'm not sure"."""

    name = "conservative path"

    def __init__(
        self,
        clarify: str = "I want to get this right. Could you tell me a bit more about what you mean?",
        unsure: str = "I'm not sure about this one, so I'd rather not guess.",
    ) -> None:
        self.clarify, self.unsure = clarify, unsure

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        said = last(as_dialogue(traj), "user") or ""
        return self.clarify if _QUESTION.search(said[-200:]) else self.unsure
