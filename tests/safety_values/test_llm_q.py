"""The LLM-backbone safety value on tiny randomly initialised Llama models built in tmp folders."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.hf

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("peft")

from governor.core import Trajectory  # noqa: E402
from governor.errors import ConfigError  # noqa: E402
from governor.safety_values.filter import SafetyFilter, ValueFallback  # noqa: E402
from governor.safety_values.learned import METRICS  # noqa: E402
from governor.safety_values.llm_q.decode import answer_mask, top_p_mask  # noqa: E402
from governor.safety_values.llm_q.evaluate import evaluate_llm_q, monitor_metrics  # noqa: E402
from governor.safety_values.llm_q.model import LLMQSettings  # noqa: E402
from governor.safety_values.llm_q.train import (  # noqa: E402
    LLMQTrainConfig,
    LLMQTrainResult,
    train_llm_q,
)
from governor.safety_values.llm_q.transitions import step_transitions, td_loss, token_targets  # noqa: E402
from governor.safety_values.llm_q.value import EXCLUDED, LLMQ  # noqa: E402
from governor.usage import metered  # noqa: E402
from governor.worlds.driving.env import LABELS, DrivingParams, describe, margin  # noqa: E402
from governor.worlds.driving.llm_task import DrivingLLMTask  # noqa: E402
from governor.worlds.driving.task import sample_live_states  # noqa: E402

PARAMS = DrivingParams()
WORDS = "the car is m away from left right edge of track goal obstacle at degrees to steer"
SPECIAL = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
VOCAB = [*SPECIAL, "A", "B", "C", "system", "user", "assistant", "<", ">", ".", ")", ":"]
VOCAB += [*"0123456789", *WORDS.split()]
TEMPLATE = "{% for m in messages %}<{{ m.role }}> {{ m.content }} {% endfor %}<assistant>"
EOS = 3
TINY_TRAIN = LLMQTrainConfig(
    n_cars=2, batch_size=2, learning_starts=2, lr=1e-2, eval_every=2, eval_states=3, log_every=1
)


def _save_tiny(path: Path, hidden: int = 16, seed: int = 0) -> Path:
    """A word-level tokenizer (digits one by one) and a 1-layer random Llama saved to ``path``."""
    word_level = tokenizers.models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]")
    raw = tokenizers.Tokenizer(word_level)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Whitespace(),
            tokenizers.pre_tokenizers.Digits(individual_digits=True),
        ]
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="[PAD]",
        unk_token="[UNK]",
        bos_token="[BOS]",
        eos_token="[EOS]",
    )
    tokenizer.chat_template = TEMPLATE
    config = transformers.LlamaConfig(
        vocab_size=len(VOCAB),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=EOS,
    )
    torch.manual_seed(seed)
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The tiny model, a copy of it elsewhere, and a model with another config."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        torch.set_num_threads(1)
        root = tmp_path_factory.mktemp("tiny-llms")
        tiny = _save_tiny(root / "tiny")
        copy = root / "copy"
        shutil.copytree(tiny, copy)
        yield {"tiny": tiny, "copy": copy, "other": _save_tiny(root / "other", hidden=32)}


@pytest.fixture(scope="module")
def trained(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> LLMQTrainResult:
    out = tmp_path_factory.mktemp("llm-q") / "ck"
    return train_llm_q(
        models["tiny"],
        out,
        task=DrivingLLMTask(),
        minutes=5.0,
        iterations=3,
        seed=0,
        progress=False,
        config=TINY_TRAIN,
        exact_value=lambda s: margin(PARAMS, s),
    )


def _perturbed(path: Path, seed: int = 1, **kw: Any) -> LLMQ:
    """An LLMQ whose adapters are random, so Q differs from the base logits."""
    llm = LLMQ(path, DrivingLLMTask(), **kw)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in llm.lora_parameters().values():
            p.copy_(torch.randn(p.shape, generator=gen))
    return llm


def _hand_top_p(logits: np.ndarray, p: float) -> set[int]:
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    kept, mass = set(), 0.0
    for i in np.argsort(-probs, kind="stable"):
        if mass >= p:
            break
        kept.add(int(i))
        mass += probs[i]
    return kept


# ---------------------------------------------------------------------- V' and the action set


def test_top_p_is_the_smallest_set_reaching_the_mass() -> None:
    logits = torch.log(torch.tensor([[0.15, 0.5, 0.05, 0.3]]))
    for p, want in ((0.4, {1}), (0.75, {1, 3}), (0.85, {0, 1, 3}), (0.99, {0, 1, 2, 3})):
        assert set(torch.nonzero(top_p_mask(logits, p)[0]).flatten().tolist()) == want
    assert bool(top_p_mask(logits, 1.0).all())
    uniform = torch.zeros((1, 4))  # exactly 0.25 each: two tokens reach 0.5, no third is needed
    assert top_p_mask(uniform, 0.5).sum() == 2 and top_p_mask(uniform, 0.25).sum() == 1


def test_answer_actions_are_the_letters_in_v_prime_or_all_letters() -> None:
    # tokens 0..4; letters are tokens 2, 3, 4
    logits = torch.log(torch.tensor([[0.05, 0.05, 0.6, 0.25, 0.05], [0.9, 0.04, 0.02, 0.02, 0.02]]))
    mask = answer_mask(logits, 0.8, (2, 3, 4))
    assert mask.tolist() == [[True, True, False], [True, True, True]]  # row 2: none kept


def test_top_p_of_the_base_model_matches_a_hand_computation(models: dict[str, Path]) -> None:
    llm = _perturbed(models["tiny"])
    ids = llm.observation_ids(describe(PARAMS, (2.0, 1.5, 0.3)))
    with torch.no_grad():
        base = llm.logits([ids], adapted=False)[0]
        adapted = llm.logits([ids])[0]
    assert not torch.allclose(base, adapted)  # the mask must come from the base, not from Q
    for p in (0.3, 0.6, 0.9):
        got = set(torch.nonzero(top_p_mask(base[None], p)[0]).flatten().tolist())
        assert got == _hand_top_p(base.numpy().astype(np.float64), p)


def test_q_values_are_the_letter_logits_inside_v_prime(models: dict[str, Path]) -> None:
    for top_p in (0.9, 0.05):
        llm = _perturbed(models["tiny"], settings=LLMQSettings(top_p=top_p))
        states = np.array([[2.0, 1.5, 0.3], [7.5, 0.8, -0.4]])
        with metered() as meter:
            q = llm.q_states(states)
        assert meter.total.calls == 2  # the adapted and the base forward pass of one batch
        for state, row in zip(states, q, strict=True):
            ids = llm.observation_ids(describe(PARAMS, state))
            with torch.no_grad():
                base = llm.logits([ids], adapted=False)[0].numpy().astype(np.float64)
                adapted = llm.logits([ids])[0].numpy()
            kept = _hand_top_p(base, top_p) & set(llm.choice_ids) or set(llm.choice_ids)
            want = [adapted[t] if t in kept else EXCLUDED for t in llm.choice_ids]
            np.testing.assert_allclose(row, want, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(llm.q_values({"state": state}), row, atol=1e-5)


def test_llm_q_plugs_into_the_safety_filter(models: dict[str, Path]) -> None:
    llm = _perturbed(models["tiny"])
    text = describe(PARAMS, (2.0, 1.5, 0.3))
    q = llm.q_values(text)
    traj = Trajectory({"text": text})
    verdicts = [SafetyFilter(llm, margin=0.0, labels=LABELS).check(traj, a) for a in range(3)]
    assert [v.admissible for v in verdicts] == [bool(x > 0.0) for x in q]
    assert ValueFallback(llm).act(traj, verdicts) == int(np.argmax(q))


# ---------------------------------------------------------------------- the token-level target


def test_eos_carries_the_next_level_and_content_tokens_the_current_one() -> None:
    steps = step_transitions([5, 6], [4], EOS, [7, 8, 9], 0.7, -0.2, True)
    content, eos = steps
    assert (content.level, content.done, content.eos, content.next_actions) == (
        0.7,
        False,
        False,
        "eos",
    )
    assert content.prompt.tolist() == [5, 6] and content.next_prompt.tolist() == [5, 6, 4]
    assert (eos.token, eos.level, eos.done, eos.eos, eos.next_actions) == (
        EOS,
        -0.2,
        True,
        True,
        "choices",
    )
    assert eos.prompt.tolist() == [5, 6, 4] and eos.next_prompt.tolist() == [7, 8, 9]
    longer = step_transitions([5], [4, 5], EOS, [9], 1.0, 0.5, False, max_tokens=3)
    assert [t.next_actions for t in longer] == ["top_p", "top_p", "choices"]
    assert [t.level for t in longer] == [1.0, 1.0, 0.5]


def test_token_targets_use_gamma_only_at_eos() -> None:
    inf, gamma = torch.inf, 0.9
    levels = torch.tensor([0.7, 0.3, 0.5, -0.2, 0.6])
    done = torch.tensor([False, False, False, True, True])  # row 4: a content token never ends
    eos = torch.tensor([False, False, True, True, False])
    online = torch.tensor(
        [[0.5, -inf, 0.2], [-inf, 5.0, 0.0], [0.1, 0.3, -inf], [1.0, 0.0, 0.0], [0.0, 2.0, 1.0]]
    )
    target = torch.tensor(
        [[0.4, 9.0, 0.3], [0.0, 0.9, 0.0], [5.0, 0.2, 5.0], [3.0, 3.0, 3.0], [0.0, 0.1, 0.0]]
    )
    y = token_targets(levels, done, eos, online, target, gamma)
    want = [0.4, 0.3, (1 - gamma) * 0.5 + gamma * 0.2, -0.2, 0.1]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_td_loss_bootstraps_from_the_target_adapter_at_the_next_position(
    models: dict[str, Path],
) -> None:
    llm = _perturbed(models["tiny"])
    b, gamma, letters = llm.choice_ids[1], 0.9, list(llm.choice_ids)
    now, nxt = (llm.observation_ids(describe(PARAMS, s)) for s in [(2, 1, 0), (2.5, 1, 0)])
    with torch.no_grad():
        base_next, online_next = llm.logits([nxt], adapted=False)[0], llm.logits([nxt])[0]
    allowed = answer_mask(base_next[None], llm.settings.top_p, llm.choice_ids)[0]
    online_best = int(online_next[letters].masked_fill(~allowed, -torch.inf).argmax())
    for seed in range(2, 20):  # a target adapter whose own argmax differs (double Q matters)
        other = _perturbed(models["tiny"], seed=seed)
        with torch.no_grad():
            target_next = other.logits([nxt])[0]
        if int(target_next[letters].masked_fill(~allowed, -torch.inf).argmax()) != online_best:
            break
    else:
        pytest.fail("no target adapter whose argmax differs from the online one")
    target = {n: p.detach() for n, p in other.lora_parameters().items()}
    content, eos = step_transitions(now, [b], llm.eos_id, nxt, 100.0, 100.0, False)
    with torch.no_grad():
        y_eos = (1 - gamma) * 100.0 + gamma * float(target_next[letters[online_best]])
        q_eos = float(llm.logits([eos.prompt])[0, EOS])
        y_content = float(other.logits([content.next_prompt])[0, EOS])  # only EOS may follow
        q_content = float(llm.logits([now])[0, b])
        with metered() as meter:
            got_eos = float(td_loss(llm, [eos], target, gamma))
        got_content = float(td_loss(llm, [content], target, gamma))
    assert meter.total.calls == 4  # base, online and target at the next prompt; Q at this one
    assert got_eos == pytest.approx((q_eos - y_eos) ** 2, rel=1e-5)
    assert got_content == pytest.approx((q_content - y_content) ** 2, rel=1e-5)


def test_only_the_lora_weights_learn(models: dict[str, Path]) -> None:
    llm = LLMQ(models["tiny"], DrivingLLMTask())
    lora = llm.lora_parameters()
    assert lora and all(".lora_A." in n or ".lora_B." in n for n in lora)
    assert {n.split(".")[-4] for n in lora} == {"q_proj", "v_proj"}
    base = {n: p.detach().clone() for n, p in llm.model.named_parameters() if n not in lora}
    prompts = [llm.observation_ids(describe(PARAMS, s)) for s in [(2, 1, 0), (5, 2, 0.5)]]
    batch = step_transitions(
        prompts[0], [llm.choice_ids[1]], llm.eos_id, prompts[1], 0.4, 0.3, False
    )
    target = {n: p.detach().clone() for n, p in lora.items()}
    loss = td_loss(llm, batch, target, 0.99)
    loss.backward()
    for name, p in llm.model.named_parameters():
        assert (p.grad is not None) == (name in lora), name
    assert any(float(p.grad.abs().sum()) > 0 for n, p in lora.items() if ".lora_B." in n)
    torch.optim.AdamW(lora.values(), lr=1e-2).step()
    for name, p in llm.model.named_parameters():
        if name not in lora:
            assert torch.equal(p, base[name]), name
    assert not torch.equal(lora[next(iter(target))], target[next(iter(target))])


# ---------------------------------------------------------------------- training and checkpoints


def test_training_checkpoints_and_reloads_the_same_q(
    trained: LLMQTrainResult, models: dict[str, Path]
) -> None:
    assert trained.iterations == 3 and not trained.interrupted
    assert trained.loss is not None and np.isfinite(trained.loss)
    assert trained.agreement is not None and 0.0 <= trained.agreement <= 1.0
    meta = json.loads((trained.out / "meta.json").read_text())
    assert (meta["env"], meta["obs"], meta["model_path"]) == (
        "driving",
        "llm",
        str(models["tiny"].resolve()),
    )
    assert meta["info"]["iteration"] == 3 and meta["info"]["config"]["batch_size"] == 2
    assert (trained.out / "adapter" / "adapter_model.safetensors").is_file()
    states = sample_live_states(PARAMS, 5, np.random.default_rng(3))
    loaded = LLMQ.load(trained.out, models["tiny"], task=DrivingLLMTask())
    assert np.array_equal(loaded.q_states(states), trained.llm_q.q_states(states))
    fresh = LLMQ(models["tiny"], DrivingLLMTask()).q_states(states)
    assert not np.allclose(fresh, loaded.q_states(states))  # training changed the value
    metrics = evaluate_llm_q(loaded, lambda s: margin(PARAMS, s), states)
    assert set(metrics) == set(METRICS)
    assert metrics["obs"] == "llm" and metrics["train_minutes"] == meta["info"]["minutes"]


def test_a_checkpoint_for_another_model_env_or_obs_is_refused(
    trained: LLMQTrainResult, models: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="config hash"):
        LLMQ.load(trained.out, models["other"], task=DrivingLLMTask(), allow_moved=True)
    with pytest.raises(ConfigError, match=r"made for the model at .*tiny"):
        LLMQ.load(trained.out, models["copy"], task=DrivingLLMTask())
    assert (
        LLMQ.load(trained.out, models["copy"], task=DrivingLLMTask(), allow_moved=True).path
        == models["copy"].resolve()
    )
    with pytest.raises(ConfigError, match="made for env 'driving', expected env 'commerce'"):
        LLMQ.load(trained.out, models["tiny"], task=DrivingLLMTask(), env="commerce")
    with pytest.raises(ConfigError, match="made for obs 'llm', expected obs 'text'"):
        LLMQ.load(trained.out, models["tiny"], task=DrivingLLMTask(), obs="text")
    with pytest.raises(ConfigError, match=r"meta\.json"):
        LLMQ.load(tmp_path, models["tiny"], task=DrivingLLMTask())


def test_keyboard_interrupt_stops_cleanly_with_a_checkpoint(
    models: dict[str, Path], tmp_path: Path
) -> None:
    def stop(status: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    result = train_llm_q(
        models["tiny"],
        tmp_path / "ck",
        task=DrivingLLMTask(),
        iterations=50,
        progress=False,
        config=TINY_TRAIN,
        exact_value=lambda s: margin(PARAMS, s),
        callback=stop,
    )
    assert result.interrupted and result.iterations == TINY_TRAIN.eval_every
    meta = json.loads((tmp_path / "ck" / "meta.json").read_text())
    assert meta["info"]["interrupted"] is True
    LLMQ.load(tmp_path / "ck", models["tiny"], task=DrivingLLMTask())


# ---------------------------------------------------------------------- value-guided decoding


def test_guided_decoding_with_beta_zero_samples_the_base_model(models: dict[str, Path]) -> None:
    llm = _perturbed(models["tiny"])
    base = transformers.AutoModelForCausalLM.from_pretrained(models["tiny"], local_files_only=True)
    prompt = "the car is 12 m away from the goal"
    ids = torch.tensor([llm.encode(prompt)])
    draws = []
    for seed in (3, 4):
        guided = llm.guided_generate(prompt, max_tokens=12, beta=0.0, temperature=1.0, seed=seed)
        torch.manual_seed(seed)
        ref = base.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            top_p=0.9,
            top_k=0,
            temperature=1.0,
            max_new_tokens=12,
            eos_token_id=EOS,
            pad_token_id=0,
        )[0, ids.shape[1] :].tolist()
        ended = ref.index(EOS) if EOS in ref else None
        assert list(guided.tokens) == ref[:ended]
        assert guided.stopped == (ended is not None)
        draws.append(guided.tokens)
    assert draws[0] != draws[1]


def test_guided_decoding_with_large_beta_follows_the_argmax_of_q(models: dict[str, Path]) -> None:
    llm = _perturbed(models["tiny"])
    prompt = "the car is 12 m away from the goal"
    out = llm.guided_generate(prompt, max_tokens=10, beta=1e4, temperature=1.0, seed=0)
    ids, differs = llm.encode(prompt), 0
    steps = [*out.tokens, EOS] if out.stopped else list(out.tokens)
    for token in steps:
        with torch.no_grad():
            base, q = llm.logits([ids], adapted=False)[0], llm.logits([ids])[0]
        inside = top_p_mask(base[None], llm.settings.top_p)[0]
        best = int(q.masked_fill(~inside, -torch.inf).argmax())
        assert token == best
        differs += best != int(base.argmax())
        ids = [*ids, token]
    assert differs > 0  # Q, not the base model, chose
    assert out.text == llm.tokenizer.decode(list(out.tokens), skip_special_tokens=True)


# ---------------------------------------------------------------------- errors, metrics


def test_a_model_path_without_weights_is_a_config_error_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    (tmp_path / "config.json").write_text("{}")
    for path in (tmp_path, tmp_path / "missing", "meta-llama/Llama-3.2-1B-Instruct"):
        with pytest.raises(ConfigError, match="weights"):
            LLMQ(path, DrivingLLMTask())
    assert attempts == []


def test_monitor_metrics_match_a_hand_count() -> None:
    q = np.array([[1.0, -1.0, -1.0], [-1.0, -1.0, -1.0], [2.0, 2.0, -1.0]])
    exact_v = np.array([1.0, 1.0, -1.0])
    exact_q = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]])
    got = monitor_metrics(q, exact_v, exact_q)
    want = {"agreement": 1 / 3, "value_f1": 0.5, "tp_rate": 1 / 3, "tn_rate": 4 / 6}
    assert got == pytest.approx({**want, "fn_rate": 2 / 3})
    all_safe = monitor_metrics(np.array([[1.0, -1.0, 1.0]]), np.ones(1), np.ones((1, 3)))
    assert all_safe == pytest.approx(  # no unsafe pair: its rate is 0
        {"agreement": 1.0, "value_f1": 1.0, "tp_rate": 2 / 3, "tn_rate": 0.0, "fn_rate": 1 / 3}
    )
    none_safe = monitor_metrics(-np.ones((1, 3)), -np.ones(1), -np.ones((1, 3)))
    assert none_safe == {
        "agreement": 1.0,
        "value_f1": 0.0,
        "tp_rate": 0.0,
        "tn_rate": 1.0,
        "fn_rate": 0.0,
    }


def test_the_commands_train_and_evaluate_an_llm_value(
    models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governor.cli import main

    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path / "cache"))
    out, report = tmp_path / "llm-ck", tmp_path / "eval.json"
    small_grid = ["--grid-nx", "21", "--grid-ny", "11", "--grid-ntheta", "16"]
    args = ["train", "safety-value", "--obs", "llm", "--model-path", str(models["tiny"])]
    assert main([*args, "--iterations", "2", "--minutes", "1", "--out", str(out), *small_grid]) == 0
    assert (out / "meta.json").is_file()
    ev = ["eval", "safety-value", str(out), "--states", "12", "--json", str(report)]
    assert main([*ev, *small_grid]) == 0
    metrics = json.loads(report.read_text())
    assert metrics["obs"] == "llm" and metrics["env"] == "driving"
    assert 0.0 <= metrics["agreement"] <= 1.0
    # obs llm without a model folder, and a model folder for another obs, are refused
    assert main(["train", "safety-value", "--obs", "llm", "--out", str(out)]) == 2
    assert main(["train", "safety-value", "--model-path", "x", "--out", str(out)]) == 2


@pytest.mark.usefixtures("small_baselines")
def test_bench_reguard_adds_an_llm_row(trained: LLMQTrainResult, tmp_path: Path) -> None:
    from governor.papers.reguard import ReGuardBenchConfig, run

    cfg = ReGuardBenchConfig(
        tables="driving",
        episodes=2,
        learned="",
        checkpoints=str(tmp_path),
        llm_checkpoint=str(trained.out),
        monitor_steps=5,
    )
    result = run(cfg, progress=False)["driving"]
    row = next(r for r in result["table1"] if r["guard"] == "reguard_llm")
    assert row["episodes"] == 2 and 0.0 <= row["success_rate"] <= 1.0
    assert result["margins"]["reguard_llm"] >= result["margins"]["exact"]
