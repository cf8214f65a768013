"""`governor bench models` at the tiny budget on the real local model; its offline parts without.

The model tests run each LLM path once, one path a test (``--only PATH``: about 3.5 minutes for
all eight on one thread here, most of it the LoRA value's training step and the Lang2LTL
translator's generated tokens), and check that each row counts its calls consistently with the
benchmark's own figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governor.backends.hf import HFBackend
from governor.backends.local_model import LOCAL_MODEL
from governor.backends.scripted import ScriptedBackend
from governor.config import BackendConfig
from governor.conversation.llm_policy import EXAMPLES_HEADER, LLMChatPolicy
from governor.errors import ConfigError
from governor.ltl.english.lang2ltl import translate_llm
from governor.ltl.english.translate import translate_offline
from governor.papers.models.sweep import NOT_RUN, PATHS, model_info, run, selected
from governor.worlds.household.ltl_domain import household_domain
from governor.worlds.smalltalk.settings import load_settings


def check_row(row: dict[str, Any]) -> None:
    """What every path's row says: it ran, its calls counted and none failed."""
    assert row["status"] == "ok", row["status"]
    assert row["llm_calls"] >= 1 and row["llm_failed"] == 0
    assert isinstance(row["unparsable"], int) and 0 <= row["unparsable"] <= row["llm_calls"]
    assert 0 < row["model_seconds"] <= row["wall_seconds"]


def check_driving(row: dict[str, Any]) -> None:
    driving = row["measures"]
    assert set(driving) == {"none", "myopic_stop", "exact_filter"}
    assert sum(g["llm_calls"] for g in driving.values()) == row["llm_calls"]
    for guard in driving.values():  # one counted call per proposal, one proposal per step
        assert guard["llm_calls"] == round(guard["mean_steps"]) and guard["deferred_steps"] >= 0
        assert 0 <= guard["guard_share_of_model_time"] < 1  # the model's time is the most
    assert driving["none"]["guard_share_of_model_time"] < 0.01  # no check: near nothing


def check_smalltalk(row: dict[str, Any]) -> None:
    talk = row["measures"]
    calls = sum(talk[c]["llm_calls_per_turn"] * talk[c]["turns"] for c in ("base", "observer"))
    assert round(calls) == row["llm_calls"]
    for c in ("base", "observer"):
        assert talk[c]["degenerate_admitted"] == len(talk[c]["degenerate"])
        assert len(talk[c]["replies"]) == talk[c]["turns"] == 1


def check_safety_chip(row: dict[str, Any]) -> None:
    chip = row["measures"]["rows"]
    assert [r["agent"] for r in chip] == ["base", "nl_constraints", "safety_chip"]
    assert sum(r["llm_calls"] for r in chip) == row["llm_calls"]
    shares = row["measures"]["guard_share_of_model_time"]
    assert set(shares) == {"base", "nl_constraints", "safety_chip"}
    assert all(x is None or x >= 0 for x in shares.values())


def check_zero_shot(row: dict[str, Any]) -> None:
    zero = row["measures"]
    assert zero["exact_filter"]["llm_calls"] == 0 and zero["verdicts_vs_exact"]["judged"] >= 1
    assert sum(zero["answers"].values()) >= zero["verdicts_vs_exact"]["judged"]


def check_lang2ltl(row: dict[str, Any]) -> None:
    ltl = row["measures"]
    assert ltl["sentences"] == 1 and ltl["offline_same_as_shipped"] == 1
    assert ltl["llm_calls_per_sentence"] == row["llm_calls"]


def check_chat(row: dict[str, Any]) -> None:
    chat = row["measures"]["transcript"]
    assert len(chat) == 1 and chat[0]["user"] == "Hi! How was your weekend?"


def check_value(row: dict[str, Any]) -> None:  # trained in a child process
    value = row["measures"]
    assert value["peak_rss_mb"] > 100 and 0.0 <= value["agreement"] <= 1.0
    assert value["eval_seconds"] > 0 and value["train_seconds"] > 0
    if row["path"] == "reguard-llm-value":
        assert value["iterations"] == 1
    else:
        assert value["forward_passes"] >= 4  # one per env step


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "driving": check_driving,
    "smalltalk": check_smalltalk,
    "safety-chip": check_safety_chip,
    "reguard-zero-shot": check_zero_shot,
    "lang2ltl": check_lang2ltl,
    "chat": check_chat,
    "reguard-llm-value": check_value,
    "reguard-frozen-value": check_value,
}


def test_every_path_has_its_model_test() -> None:
    assert list(CHECKS) == [*PATHS, *NOT_RUN]


@pytest.mark.model
@pytest.mark.parametrize("path", list(CHECKS))
def test_an_llm_path_at_the_tiny_budget(local_model: HFBackend, tmp_path: Path, path: str) -> None:
    """``governor bench models --budget tiny --only PATH``, one path a test (each its own row)."""
    config = BackendConfig(model_path=LOCAL_MODEL)
    out = run(config, "tiny", path, json_path=tmp_path / "models.json", backend=local_model)
    assert json.loads((tmp_path / "models.json").read_text()) == json.loads(json.dumps(out))
    assert out["model"]["name"] == LOCAL_MODEL and "Q4_K_M" in out["model"]["quantisation"]
    assert [r["path"] for r in out["rows"]] == [path]
    check_row(out["rows"][0])
    CHECKS[path](out["rows"][0])


def test_only_names_known_paths() -> None:
    assert selected("chat,driving") == ["driving", "chat"]
    assert selected(None) == [*PATHS, *NOT_RUN]
    with pytest.raises(ConfigError, match="some of driving"):
        selected("driving,flying")


def test_the_safety_values_need_the_weights_in_a_folder() -> None:
    config = BackendConfig(base_url="http://127.0.0.1:1/v1", model="m")
    only = "reguard-llm-value,reguard-frozen-value"
    out = run(config, "tiny", only, backend=ScriptedBackend([]))
    assert [r["path"] for r in out["rows"]] == only.split(",")
    for row in out["rows"]:
        assert row["status"].startswith("not run: ") and "local model folder" in row["status"]
        assert row["llm_calls"] == 0


def test_an_endpoint_model_is_labelled_by_its_name() -> None:
    info = model_info(BackendConfig(base_url="http://127.0.0.1:1/v1", model="m"))
    assert info == {"name": "m", "endpoint": "http://127.0.0.1:1/v1", "quantisation": "as served"}


def test_chat_settings_show_the_model_human_exchanges() -> None:
    settings = load_settings(None)
    policy = settings.make_policy(lambda _config: ScriptedBackend([]))
    assert isinstance(policy, LLMChatPolicy)
    assert EXAMPLES_HEADER in policy.system_prompt and len(policy.examples) == 4
    assert policy.max_tokens == 60 and policy.stop == ("\n",)


def test_chat_settings_without_examples(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    path.write_text("policy: {examples: 0}\n")
    policy = load_settings(path).make_policy(lambda _config: ScriptedBackend([]))
    assert isinstance(policy, LLMChatPolicy) and EXAMPLES_HEADER not in policy.system_prompt
    assert policy.examples == ()


def test_lang2ltl_reads_the_answer_a_base_model_ran_on_after() -> None:
    """The reply's JSON list, then words: the list is read; two lists or a broken one are not."""
    sentence, domain = "never go near kitchentable", household_domain()
    replies = ['["go near kitchentable"] besuchte', "G !P1"]
    t = translate_llm(sentence, domain, ScriptedBackend(replies))
    assert t.ok and t.method == "llm" and t.formula == translate_offline(sentence, domain).formula
    for bad in ('["go near kitchentable"] ["x"]', '["go near kitchentable"'):
        t = translate_llm(sentence, domain, ScriptedBackend([bad]))
        assert t.formula is None and t.error is not None and "step 1" in t.error
