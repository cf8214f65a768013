import dataclasses
import json

import numpy as np
import pytest
import torch

from governor.errors import ConfigError
from governor.safety_values.encoders import ObservationModel
from governor.safety_values.learned import save_checkpoint
from governor.worlds.commerce.bench import (
    CheapestFirstAgent,
    CheckoutAgent,
    CommerceBenchConfig,
    RandomAgent,
    commerce_episode,
    run_commerce,
    starts,
)
from governor.worlds.commerce.env import CommerceParams, named_start
from governor.worlds.commerce.value import commerce_exact_filter

P = CommerceParams()


def _best_final_total(cart):
    """The cheapest total reachable: the priciest ``actions`` rows removed (independent of the DP)."""
    cents = np.sort(P.prices_cents[cart[:-1].astype(int)])
    return cents[: max(len(cents) - int(cart[-1]), 0)].sum() / 100


def test_exact_filter_keeps_every_savable_start_within_budget():
    result = run_commerce(CommerceBenchConfig(random_starts=12, seed=1))
    carts = starts(P, CommerceBenchConfig(random_starts=12, seed=1))
    savable = {name: _best_final_total(cart) <= 50.0 for name, cart in carts}
    assert result["starts"] == 20 and result["no_safe_starts"] == sum(
        not s for s in savable.values()
    )
    assert result["no_safe_starts"] >= 2  # over_by_a_cent and ten_mid_priced at least
    for row in result["rows"]:
        assert row["safe_exists"] == savable[row["start"]]
        if row["guard"] == "exact":
            assert row["under_budget"] == row["safe_exists"], row
            assert row["under_budget"] == (row["final_total"] <= 50.0)
    exact = {(s["agent"], s["guard"]): s for s in result["methods"]}
    assert all(exact[(a, "exact")]["success_rate_feasible"] == 1.0 for a in ("checkout", "random"))
    # unguarded, the short-sighted agent loses the five-largest cart; checking out at once is worse
    none = {
        r["start"]: r
        for r in result["rows"]
        if r["agent"] == "cheapest_first" and r["guard"] == "none"
    }
    assert not none["five_largest"]["under_budget"] and none["ginger_ale"]["under_budget"]
    assert (
        exact[("checkout", "none")]["success_rate"] < exact[("checkout", "exact")]["success_rate"]
    )
    json.dumps(result)  # JSON-ready


def test_one_episode_reports_total_budget_and_interventions():
    start = named_start(P, "five_largest")
    plain = commerce_episode(P, start, CheapestFirstAgent(P))
    assert plain["final_total"] == pytest.approx(155.42) and not plain["under_budget"]
    monitor, fallback = commerce_exact_filter(P)
    guarded = commerce_episode(P, start, CheapestFirstAgent(P), [monitor], fallback)
    assert guarded["final_total"] == pytest.approx(35.69) and guarded["under_budget"]
    assert guarded["interventions"] == 5 and guarded["steps"] == 5
    at_once = commerce_episode(P, named_start(P, "under_budget"), CheckoutAgent())
    assert at_once == {
        "final_total": 41.77,
        "under_budget": True,
        "outcome": "success",
        "interventions": 0,
        "steps": 1,
    }


def test_random_agent_is_seeded_and_clicks_present_elements():
    start = named_start(P, "one_expensive")
    runs = [commerce_episode(P, start, RandomAgent(P, seed=7)) for _ in range(2)]
    assert runs[0] == runs[1]


def test_learned_guard_runs_from_a_checkpoint(tmp_path):
    torch.manual_seed(0)
    model = ObservationModel("state", P, {})
    save_checkpoint(tmp_path / "ck", model, model.network(), {"minutes": 0.0})
    cfg = CommerceBenchConfig(
        random_starts=0, agent="cheapest_first", checkpoint=str(tmp_path / "ck")
    )
    result = run_commerce(cfg)
    guards = {s["guard"] for s in result["methods"]}
    assert guards == {"none", "exact", "learned"} and result["starts"] == 8
    # an untrained net is wrong everywhere: its calibrated margin rises well above --margin
    assert result["learned_margin"] > cfg.margin
    strict = run_commerce(dataclasses.replace(cfg, false_safe=0.0, margin=0.5))
    assert strict["learned_margin"] >= max(0.5, result["learned_margin"])
    driving = tmp_path / "drive"
    from governor.worlds.driving.env import DrivingParams

    other = ObservationModel("state", DrivingParams(), {})
    save_checkpoint(driving, other, other.network(), {})
    with pytest.raises(ConfigError, match="trained for env 'driving', expected env 'commerce'"):
        run_commerce(CommerceBenchConfig(random_starts=0, checkpoint=str(driving)))


def test_config_is_checked():
    with pytest.raises(ConfigError, match="random_starts"):
        CommerceBenchConfig(random_starts=-1)
    with pytest.raises(ConfigError, match="agent: expected all or cheapest_first"):
        CommerceBenchConfig(agent="llm")  # type: ignore[arg-type]
