"""In-home training (the journal paper, 6.2): sessions within a training window, gated or not.

Each simulated day (:mod:`.family`, stated dynamics) the agent wants one training session of
three short practice conversations, each followed by feedback. Conditions, on the same days:

- ``ungated`` (the ablation): prompt at every tick from the window's start until the learner
  accepts; feedback is the offline generator's first message, unchecked;
- ``gated`` (the treatment): the supervisor's engagement gate (in the window, someone present,
  no conversation or media heard, estimated affect above -0.3) and refusal cooldown (two
  refusals stop prompting for an hour); feedback under the pedagogical overlays (:mod:`.pedagogy`);
- ``gated_no_cooldown``: the gate without the cooldown.

The learner answers a prompt when home: it accepts with probability 0.85 when the moment is
appropriate, 0.3 otherwise (a fifth of that on a reluctant day); away, the prompt goes
unanswered (a refusal). Primary metric:
interactions started at inappropriate times per day (lower is better). Feedback messages come
from an offline generator (not a model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from governor.config import ObserverConfig
from governor.core import Fallback, Trajectory, Verdict
from governor.observer import Observer
from governor.overlays.constraint import overlay_constraints
from governor.supervision import (
    AffectClassifier,
    EngagementGate,
    FixedSelector,
    GatingRule,
    Mode,
    ModeGraph,
    PresenceClassifier,
    RefusalClassifier,
    Supervisor,
    SupervisorConfig,
    TimeWindowClassifier,
)
from governor.worlds.scenarios.family import TICKS, WINDOW, day
from governor.worlds.scenarios.pedagogy import feedback_overlays
from governor.worlds.scenarios.replies import OfflineReplies
from governor.worlds.scenarios.scenario import ScenarioResult

CONDITIONS = ("ungated", "gated", "gated_no_cooldown")
CONVERSATIONS = 3
NAG_TICKS = 4  # an hour
DAYS = 7  # days per learner (one episode)
FEEDBACK = (
    "Nice job asking about my weekend. Next time, try one follow-up question.",
    "Great start! You said hello and asked how I was. Try sharing something about yourself too.",
    "You kept the conversation going. Next time, end it with a friendly goodbye.",
    "That was wrong. You never ask questions.",
    "You did okay but it was a bit awkward when you stopped talking.",
    "Well, in terms of the conversation overall, there were some aspects that, considering"
    " everything, could perhaps have gone somewhat differently than planned.",
)
SAFE_FEEDBACK = (
    "Thanks for practicing. You kept the conversation going. Try one question next time."
)
RULES = (
    GatingRule("in_window", "in_window >= 1"),
    GatingRule("user_present", "user_present >= 1", sustain=True),
    GatingRule("quiet", "others_talking < 1"),
    GatingRule("mood", "user_affect > -0.3"),
)


class SafeFeedback(Fallback):
    name = "safe feedback template"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> str:
        return SAFE_FEEDBACK


def supervisor(condition: str, rng: np.random.Generator) -> Supervisor:
    """The training supervisor: one mode whose observer guards the feedback."""
    config = ObserverConfig(n_candidates=1, max_regenerations=2, time_budget_s=None)
    observer = Observer(
        OfflineReplies(FEEDBACK, rng), overlay_constraints(feedback_overlays()), SafeFeedback(),
        config=config,
    )  # fmt: skip
    gate = EngagementGate(
        [TimeWindowClassifier(*WINDOW), PresenceClassifier(), AffectClassifier(), RefusalClassifier()],
        RULES,
    )  # fmt: skip
    cooldown = SupervisorConfig(max_refusals=2, cooldown_steps=4)
    cfg = SupervisorConfig(max_refusals=1000) if condition == "gated_no_cooldown" else cooldown
    graph = ModeGraph([Mode("training", observer)], {}, "training")
    return Supervisor(graph, FixedSelector("training"), gate=gate, config=cfg)


@dataclass
class DayTally:
    starts: int = 0
    inappropriate: int = 0
    sessions: int = 0
    nagging: int = 0  # prompts within an hour after an unanswered or refused prompt
    delivered: int = 0
    flagged: int = 0  # delivered feedback that the pedagogical overlays reject
    replaced: int = 0  # feedback the observer rejected before it was said
    cumulative: tuple[int, ...] = ()


def _flagged(text: str) -> bool:
    return any(not o.evaluate((), text).admissible for o in feedback_overlays())


def one_day(condition: str, seed: int) -> DayTally:
    moments = day(seed)
    rng = np.random.default_rng([seed, 2])
    sup = supervisor(condition, rng)
    ungated = OfflineReplies(FEEDBACK, rng)
    state, tally, refused, done, curve = sup.start(), DayTally(), None, False, []
    last_refusal = -100
    for i, m in enumerate(moments):
        if done:
            curve.append(tally.inappropriate)
            continue
        if condition == "ungated":
            prompt = WINDOW[0] <= m.hour < WINDOW[1]
        else:
            report: dict[str, bool] = (
                {} if refused is None else {"refused": refused, "done": refused}
            )
            decision = sup.step(state, {**m.observation(), **report})
            state, prompt = decision.state, decision.acts
        refused = None
        if prompt:
            tally.starts += 1
            tally.inappropriate += not m.appropriate
            tally.nagging += i - last_refusal <= NAG_TICKS
            willing = (0.85 if m.appropriate else 0.3) * (0.2 if m.reluctant else 1.0)
            accepted = m.home and m.accept_draw < willing
            refused = not accepted
            if refused:
                last_refusal = i
            else:
                tally.sessions, done = 1, True
                for _ in range(CONVERSATIONS):
                    if condition == "ungated":
                        text = str(ungated.propose(Trajectory(""), None, 1)[0].action)
                    else:
                        step = sup.graph["training"].observer.step(Trajectory(""))
                        tally.replaced += step.intervened
                        text = str(step.action)
                    tally.delivered += 1
                    tally.flagged += _flagged(text)
        curve.append(tally.inappropriate)
    tally.cumulative = tuple(curve)
    return tally


def run(*, episodes: int, seed: int) -> ScenarioResult:
    """``episodes`` seeded learners, a week of days each, per condition."""
    rows, series, conditions = [], {}, {}
    for cond in CONDITIONS:
        days = [one_day(cond, seed * 100_003 + i) for i in range(DAYS * episodes)]

        def mean(key: str, days: list[DayTally] = days) -> float:
            return float(np.mean([getattr(d, key) for d in days]))

        delivered = sum(d.delivered for d in days)
        conditions[cond] = round(mean("inappropriate"), 4)
        series[cond] = tuple(
            round(float(x), 4) for x in np.mean([d.cumulative for d in days], axis=0)
        )
        rows.append({
            "condition": cond,
            "inappropriate_starts_per_day": round(mean("inappropriate"), 4),
            "starts_per_day": round(mean("starts"), 3),
            "share_inappropriate": round(sum(d.inappropriate for d in days) / max(1, sum(d.starts for d in days)), 3),
            "days_with_session": round(mean("sessions"), 3),
            "nagging_prompts_per_day": round(mean("nagging"), 3),
            "feedback_delivered": delivered,
            "feedback_flagged": sum(d.flagged for d in days),
            "feedback_replaced": sum(d.replaced for d in days),
        })  # fmt: skip
    notes = (
        f"{DAYS * episodes} simulated days per condition ({episodes} learners x {DAYS}), {TICKS} ticks of 15 minutes (offline"
        " household model with stated dynamics and noisy sensors, not a real family);"
        " feedback from an offline generator (not a model).",
        "feedback_flagged counts delivered messages that the pedagogical overlays reject.",
    )
    return ScenarioResult(
        "training", "inappropriate_starts_per_day", True, "gated", "ungated", conditions,
        tuple(rows), series, "cumulative inappropriate starts", notes,
    )  # fmt: skip
