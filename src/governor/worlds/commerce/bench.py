"""The commerce benchmark: base agents with no guard, the exact filter and a learned filter.

Every (agent, guard) pair shops from the same starts: our 8 named carts
(:data:`~governor.worlds.commerce.page.NAMED_STARTS`, not the paper's, which it does not list) and
seeded random carts, each with the full window of actions. The agents are scripted stand-ins,
not models: ``cheapest_first`` checks out once the cart is within budget and otherwise removes
the cheapest item (a plausible but short-sighted habit: it fails where the five most expensive
items had to go), ``checkout`` checks out at once, and ``random`` clicks a present element
uniformly (seeded). Each start reports the final total, whether it is within budget, and how
often the guard intervened; starts where no sequence of clicks can end within budget are
counted, since no guard can save them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

import governor.worlds.commerce.task  # noqa: F401  # registers the env "commerce" for checkpoints
from governor.config import ObserverConfig, check_range, option
from governor.core import Candidate, Constraint, Fallback, Feedback, Policy, Trajectory
from governor.errors import ConfigError, expected
from governor.observer import Observer
from governor.runner import run_episode
from governor.worlds.commerce.env import (
    CommerceEnv,
    CommerceParams,
    named_start,
    random_carts,
    rows_of,
    totals_cents,
)
from governor.worlds.commerce.page import NAMED_STARTS
from governor.worlds.commerce.value import CommerceValue, cart_state_of, commerce_exact_filter

AGENTS = ("cheapest_first", "checkout", "random")


@dataclasses.dataclass(frozen=True)
class CommerceBenchConfig:
    """What the commerce benchmark runs."""

    agent: Literal["all", "cheapest_first", "checkout", "random"] = option(
        "all", "base agent: cheapest_first, checkout, random, or all of them"
    )
    random_starts: int = option(8, "seeded random carts beside the 8 named ones")
    seed: int = option(0, "seed of the random carts and of the random agent")
    checkpoint: str | None = option(
        None, "commerce safety-value checkpoint for the learned filter (none: skip that guard)"
    )
    margin: float = option(0.0, "filter margin: admit a click iff Q > margin (dollars)")
    false_safe: float = option(
        0.005,
        "learned filter: margin raised until at most this share of admitted held-out "
        "(cart, click) pairs is doomed (never below --margin)",
    )

    def __post_init__(self) -> None:
        check_range("margin", self.margin, 0.0, 1e6)  # below 0 the filter admits failing clicks
        check_range("random_starts", self.random_starts, 0, 100_000)
        check_range("false_safe", self.false_safe, 0.0, 1.0)
        if self.agent not in ("all", *AGENTS):
            raise ConfigError(f"agent: {expected('all or ' + ', '.join(AGENTS), self.agent)}")


class CheapestFirstAgent(Policy):
    """Checks out once the cart is within budget; otherwise removes the cheapest item."""

    name = "cheapest_first"

    def __init__(self, params: CommerceParams) -> None:
        self.params = params

    def action(self, state: np.ndarray) -> int:
        p = self.params
        rows = rows_of(state)
        present = rows[rows >= 0]
        if int(totals_cents(p, state)) <= p.budget_cents or not len(present):
            return 0
        return int(np.argmin(p.prices_cents[present])) + 1

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(self.action(cart_state_of(self.params, traj.observation)))]


class CheckoutAgent(Policy):
    """Clicks "Proceed to Checkout" at once."""

    name = "checkout"

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(0)]


class RandomAgent(Policy):
    """Clicks a present element (checkout or a row's "Remove item") uniformly; seeded."""

    name = "random"

    def __init__(self, params: CommerceParams, seed: int | None = None) -> None:
        self.params, self.rng = params, np.random.default_rng(seed)

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        rows = rows_of(cart_state_of(self.params, traj.observation))
        count = int((rows >= 0).sum())
        return [Candidate(int(a)) for a in self.rng.integers(0, count + 1, max(n, 1))]


def make_agent(name: str, params: CommerceParams, seed: int) -> Policy:
    if name == "cheapest_first":
        return CheapestFirstAgent(params)
    if name == "checkout":
        return CheckoutAgent()
    if name == "random":
        return RandomAgent(params, seed)
    raise ConfigError(f"agent: {expected(', '.join(AGENTS), name)}")


def make_guard(
    name: str, params: CommerceParams, cfg: CommerceBenchConfig, margin: float | None = None
) -> tuple[list[Constraint], Fallback | None]:
    """``none``, ``exact`` (the dynamic programme) or ``learned`` (``cfg.checkpoint``, with
    ``margin``, by default calibrated by :func:`learned_margin`)."""
    if name == "none":
        return [], None
    if name == "exact":
        monitor, fallback = commerce_exact_filter(params, cfg.margin)
        return [monitor], fallback
    if name == "learned" and cfg.checkpoint is not None:
        from governor.safety_values.learned import learned_filter  # torch: only for a checkpoint

        if margin is None:
            margin = learned_margin(params, cfg)
        learned, fallback = learned_filter(cfg.checkpoint, margin, params, env="commerce")
        return [learned], fallback
    raise ConfigError(f"guard: {expected('none, exact, or learned with a checkpoint', name)}")


def learned_margin(params: CommerceParams, cfg: CommerceBenchConfig) -> float:
    """The learned filter's margin, calibrated on held-out carts against the exact value."""
    from governor.safety_values.learned import LearnedQ, calibrated_margin, held_out_states

    assert cfg.checkpoint is not None
    q = LearnedQ.load(cfg.checkpoint, env="commerce", params=params)
    states = held_out_states(params, 20_000, cfg.seed, stream=2)
    exact = CommerceValue(params).q_batch
    return calibrated_margin(q.q_states, exact, states, cfg.false_safe, floor=cfg.margin)


def starts(params: CommerceParams, cfg: CommerceBenchConfig) -> list[tuple[str, np.ndarray]]:
    """Our named carts, then ``cfg.random_starts`` seeded random carts with every action left."""
    out = [(name, named_start(params, name)) for name in NAMED_STARTS]
    carts = random_carts(params, cfg.random_starts, np.random.default_rng([cfg.seed, 11]))
    carts[:, -1] = params.actions
    return out + [(f"random_{i}", cart) for i, cart in enumerate(carts)]


def commerce_episode(
    params: CommerceParams,
    start: np.ndarray,
    agent: Policy,
    constraints: Sequence[Constraint] = (),
    fallback: Fallback | None = None,
) -> dict[str, Any]:
    """One guarded episode from ``start``: final total, within budget, interventions, steps."""
    observer = Observer(agent, constraints, fallback, config=ObserverConfig(max_regenerations=0))
    rows = rows_of(start)
    options = {"cart": [int(i) for i in rows[rows >= 0]], "actions": int(start[-1])}
    episode = run_episode(CommerceEnv(params), observer, options=options)
    return {
        "final_total": float(episode.info["total"]),
        "under_budget": episode.outcome == "success",
        "outcome": episode.outcome,
        "interventions": episode.interventions,
        "steps": episode.steps,
    }


def run_commerce(cfg: CommerceBenchConfig, params: CommerceParams | None = None) -> dict[str, Any]:
    """Run every (agent, guard) pair from every start; a JSON-ready dict.

    ``rows``: one per (start, agent, guard); ``methods``: one per (agent, guard), named
    "agent/guard", with the success rate over all starts and over the starts that have a safe
    sequence (``success_rate_feasible``); ``no_safe_starts``: how many starts have none.
    """
    params = params if params is not None else CommerceParams()
    carts = starts(params, cfg)
    exact = CommerceValue(params)
    safe = exact.values(np.stack([cart for _, cart in carts])) > 0.0
    agents = AGENTS if cfg.agent == "all" else (cfg.agent,)
    guards = ("none", "exact") + (("learned",) if cfg.checkpoint is not None else ())
    margin = learned_margin(params, cfg) if cfg.checkpoint is not None else None
    rows: list[dict[str, Any]] = []
    for guard in guards:
        constraints, fallback = make_guard(guard, params, cfg, margin)
        for agent_name in agents:
            for i, ((name, cart), has_safe) in enumerate(zip(carts, safe, strict=True)):
                agent = make_agent(agent_name, params, seed=cfg.seed * 100_003 + i)
                result = commerce_episode(params, cart, agent, constraints, fallback)
                start_total = int(totals_cents(params, cart)) / 100.0
                rows.append(
                    {"start": name, "start_total": start_total, "safe_exists": bool(has_safe)}
                    | {"agent": agent_name, "guard": guard, **result}
                )
    return {
        "config": dataclasses.asdict(cfg),
        "budget": params.budget,
        "actions": params.actions,
        "starts": len(carts),
        "no_safe_starts": int((~safe).sum()),
        "learned_margin": margin,
        "rows": rows,
        "methods": summarise(rows),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (agent, guard): success over all starts and over those with a safe sequence."""
    out = []
    pairs = dict.fromkeys((r["agent"], r["guard"]) for r in rows)
    for agent, guard in pairs:
        mine = [r for r in rows if r["agent"] == agent and r["guard"] == guard]
        feasible = [r for r in mine if r["safe_exists"]]
        out.append(
            {
                "method": f"{agent}/{guard}",
                "agent": agent,
                "guard": guard,
                "starts": len(mine),
                "success_rate": sum(r["under_budget"] for r in mine) / len(mine),
                "success_rate_feasible": (
                    sum(r["under_budget"] for r in feasible) / len(feasible) if feasible else None
                ),
                "interventions": sum(r["interventions"] for r in mine),
            }
        )
    return out
