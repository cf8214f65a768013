"""`governor bench models` at the tiny budget on the real local model; its offline parts without.

The model test runs every LLM path once (about a minute and a half on one thread here) and checks
that each row counts its calls consistently with the benchmark's own figures.
"""

from __future__ import annotations

import json
from pathlib import Path

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


@pytest.mark.model
def test_every_llm_path_at_the_tiny_budget(local_model: HFBackend, tmp_path: Path) -> None:
    config = BackendConfig(model_path=LOCAL_MODEL)
    out = run(config, "tiny", json_path=tmp_path / "models.json", backend=local_model)
    assert json.loads((tmp_path / "models.json").read_text()) == json.loads(json.dumps(out))
    assert out["model"]["name"] == LOCAL_MODEL and "Q4_K_M" in out["model"]["quantisation"]
    rows = {r["path"]: r for r in out["rows"]}
    assert list(rows) == [*PATHS, *NOT_RUN]
    for name in PATHS:
        row = rows[name]
        assert row["status"] == "ok", row["status"]
        assert row["llm_calls"] >= 1 and row["llm_failed"] == 0
        assert isinstance(row["unparsable"], int) and 0 <= row["unparsable"] <= row["llm_calls"]
        assert 0 < row["model_seconds"] <= row["wall_seconds"]
    for name in ("reguard-llm-value", "reguard-frozen-value"):  # trained in a child process
        value = rows[name]["measures"]
        assert value["peak_rss_mb"] > 100 and 0.0 <= value["agreement"] <= 1.0
        assert value["eval_seconds"] > 0 and value["train_seconds"] > 0
    assert rows["reguard-llm-value"]["measures"]["iterations"] == 1
    assert rows["reguard-frozen-value"]["measures"]["forward_passes"] >= 4  # one per env step
    driving = rows["driving"]["measures"]
    assert set(driving) == {"none", "myopic_stop", "exact_filter"}
    assert sum(g["llm_calls"] for g in driving.values()) == rows["driving"]["llm_calls"]
    for guard in driving.values():  # one counted call per proposal, one proposal per step
        assert guard["llm_calls"] == round(guard["mean_steps"]) and guard["deferred_steps"] >= 0
        assert 0 <= guard["guard_share_of_model_time"] < 1  # the model's time is the most
    assert driving["none"]["guard_share_of_model_time"] < 0.01  # no check: near nothing
    talk = rows["smalltalk"]["measures"]
    calls = sum(talk[c]["llm_calls_per_turn"] * talk[c]["turns"] for c in ("base", "observer"))
    assert round(calls) == rows["smalltalk"]["llm_calls"]
    for c in ("base", "observer"):
        assert talk[c]["degenerate_admitted"] == len(talk[c]["degenerate"])
        assert len(talk[c]["replies"]) == talk[c]["turns"] == 1
    chip = rows["safety-chip"]["measures"]["rows"]
    assert [r["agent"] for r in chip] == ["base", "nl_constraints", "safety_chip"]
    assert sum(r["llm_calls"] for r in chip) == rows["safety-chip"]["llm_calls"]
    shares = rows["safety-chip"]["measures"]["guard_share_of_model_time"]
    assert set(shares) == {"base", "nl_constraints", "safety_chip"}
    assert all(x is None or x >= 0 for x in shares.values())
    zero = rows["reguard-zero-shot"]["measures"]
    assert zero["exact_filter"]["llm_calls"] == 0 and zero["verdicts_vs_exact"]["judged"] >= 1
    assert sum(zero["answers"].values()) >= zero["verdicts_vs_exact"]["judged"]
    ltl = rows["lang2ltl"]["measures"]
    assert ltl["sentences"] == 1 and ltl["offline_same_as_shipped"] == 1
    assert ltl["llm_calls_per_sentence"] == rows["lang2ltl"]["llm_calls"]
    chat = rows["chat"]["measures"]["transcript"]
    assert len(chat) == 1 and chat[0]["user"] == "Hi! How was your weekend?"


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
