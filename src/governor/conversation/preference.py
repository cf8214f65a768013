"""Preferring human-like replies among admissible ones: a scoring column and the ranking arbiter.

:class:`HumanLikeness` is a constraint that admits every reply; its verdict's ``margin`` is minus
the distance between the reply's features and a target drawn for this turn from the calibrated
human reference (:class:`~governor.overlays.reference.HumanReference`). The draw is seeded by the
dialogue, so every candidate of a turn meets the same target, runs are reproducible and the check
stays a pure function. :class:`RankingArbiter` takes, among admissible candidates, the one with
the fewest verdicts past a boundary (the small-talk paper's observer ranks partially compliant
replies), then the one nearest the target, then the policy's order.

Nearest a uniform draw, not nearest the median: choosing the median-most reply every turn squeezes
the replies' spread well below the human one, while matching a fresh draw keeps most of it (all of
it as the candidates grow many; see the reference module).

The draws are tracked over the conversation (``track``): each earlier reply's shortfall from its
own draw is added to this turn's target, so a conversation whose replies have run long aims
shorter until the sums of places and draws agree again (error diffusion). With a base whose
candidates drift as the conversation goes on, this is what keeps the replies' level from drifting
with them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from governor.arbiter import Arbiter, Arbitration
from governor.config import ObserverConfig
from governor.core import Candidate, Constraint, Trajectory, Verdict
from governor.errors import SpecError
from governor.overlays.features.base import Resources, get_feature
from governor.overlays.features.dialogue import Dialogue, as_dialogue, bot_history
from governor.overlays.reference import HumanReference

PREFERENCE = "human_likeness"


class HumanLikeness(Constraint):
    """Admits everything; ``margin`` = -(distance to this turn's draw from the human reference)."""

    name = PREFERENCE

    def __init__(
        self,
        reference: HumanReference,
        resources: Resources,
        *,
        seed: int = 0,
        track: bool = True,
        dialogue: Callable[[Trajectory], Dialogue] = as_dialogue,
    ) -> None:
        for f in reference.features:
            used = get_feature(f).method_with(resources)
            if reference.method(f) != used:
                raise SpecError(
                    f"human reference {f}: calibrated with {reference.method(f)}, but these"
                    f" resources compute it by {used}; recalibrate with the same tokenizer/embed"
                )
        self.reference, self.resources, self.seed, self.track = reference, resources, seed, track
        self.dialogue = dialogue

    def target(self, context: Dialogue) -> dict[str, float]:
        """The places drawn for the reply after ``context``."""
        key = "\x1f".join(f"{t.role}:{t.text}" for t in context)
        return self.reference.draw(self.seed, f"likeness\x1d{key}")

    def places(self, context: Dialogue, reply: str) -> dict[str, float]:
        """Where ``reply``'s features lie in the human distributions."""
        ref, res = self.reference, self.resources
        return {
            f: ref.rank(f, float(get_feature(f).fn(context, reply, res=res))) for f in ref.features
        }

    def score(self, context: Dialogue, reply: str) -> float:
        """Distance (0 to 1) of ``reply`` to the target drawn for the turn after ``context``."""
        target = self.target(context)
        if self.track:
            for ctx, said in bot_history(context):
                drawn, got = self.target(ctx), self.places(ctx, said)
                target = {f: target[f] + drawn[f] - got[f] for f in target}
        got = self.places(context, reply)
        return sum(abs(got[f] - target[f]) for f in target) / len(target)

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if not isinstance(action, str) or not action.strip():
            return Verdict.allow(self.name)  # the overlays reject it; nothing to rank
        return Verdict.allow(self.name, margin=-self.score(self.dialogue(traj), action))


class RankingArbiter(Arbiter):
    """Among admissible candidates: fewest verdicts past a boundary, then nearest the target.

    The target is the margin of the ``prefer`` column (absent: ties keep the policy's order).
    """

    def __init__(self, config: ObserverConfig | None = None, *, prefer: str = PREFERENCE) -> None:
        super().__init__(config)
        self.prefer = prefer

    def arbitrate(
        self, candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
    ) -> Arbitration:
        result = super().arbitrate(candidates, rows)
        if result.chosen is None:
            return result
        ok = [i for i in result.admissible if result.confidences[i] >= self.min_confidence]
        best = min(ok, key=lambda i: (*self._rank(rows[i]), i))
        return dataclasses.replace(result, chosen=best, confidence=result.confidences[best])

    def _rank(self, row: Sequence[Verdict]) -> tuple[int, float]:
        past = sum(v.deviation > 0 for v in row if v.constraint != self.prefer)
        gap = next((-(v.margin or 0.0) for v in row if v.constraint == self.prefer), 0.0)
        return past, gap
