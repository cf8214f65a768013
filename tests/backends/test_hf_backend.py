"""HFBackend on a tiny randomly initialised Llama model built in a temporary folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tiny_llama import SPECIAL, VOCAB, WORDS, save_tiny_llama

from governor.backends import HFBackend, Message
from governor.errors import BackendUnavailable, ConfigError
from governor.usage import metered

pytestmark = pytest.mark.hf

TEMPLATE = "{% for m in messages %}<{{ m.role }}> {{ m.content }} {% endfor %}<assistant>"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A word-level tokenizer and a 1-layer Llama with random weights, saved once per module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def backend(model_dir: Path) -> HFBackend:
    return HFBackend(model_dir, num_threads=1)


def test_greedy_chat_returns_n_completions_with_exact_token_counts(backend: HFBackend) -> None:
    messages = [Message("system", "be brief"), Message("user", "the cat sat on the mat")]
    transcript = "system : be brief user : the cat sat on the mat assistant :"
    with metered() as meter:
        result = backend.chat(messages, n=3, max_tokens=6)
    assert len(result.completions) == 3
    assert len({c.text for c in result.completions}) == 1  # greedy: one answer, repeated
    assert result.usage.calls == 1 and meter.total.calls == 1
    assert result.usage.prompt_tokens == len(transcript.split())
    generated = result.usage.completion_tokens
    assert 1 <= generated <= 6
    first = result.completions[0]
    assert first.finish_reason == ("length" if generated == 6 else "stop")
    assert len(first.text.split()) <= generated
    assert backend.name == f"hf:{backend.path.name}"


def test_sampling_draws_n_sequences(backend: HFBackend) -> None:
    result = backend.chat("the dog ran", n=4, temperature=1.5, max_tokens=8)
    assert len(result.completions) == 4
    assert 4 <= result.usage.completion_tokens <= 32
    assert len({c.text for c in result.completions}) > 1  # random weights, hot sampling


def test_logprobs_agree_with_next_token_logits(backend: HFBackend) -> None:
    result = backend.chat("the cat", max_tokens=5, top_logprobs=3)
    tokens = result.completions[0].logprobs
    assert tokens is not None and len(tokens) == result.usage.completion_tokens
    for token in tokens:
        assert token.logprob <= 0.0 and len(token.top) == 3
        assert token.top[0][1] == pytest.approx(token.logprob, abs=1e-5)  # greedy picks the top
        assert token.top[0][1] >= token.top[1][1] >= token.top[2][1]
    logits = backend.next_token_logits([Message("user", "the cat")])
    assert logits.shape == (len(VOCAB),) and logits.dtype == np.float32
    logp = logits - np.logaddexp.reduce(logits)
    assert tokens[0].logprob == pytest.approx(float(logp.max()), abs=1e-4)
    assert tokens[0].token == VOCAB[int(logp.argmax())]


def test_stop_strings_truncate_the_text_and_its_logprobs(backend: HFBackend) -> None:
    full = backend.chat("a big red house", max_tokens=12, logprobs=True).completions[0]
    words = full.text.split()
    assert words, "the tiny model should say something"
    stop = f" {words[len(words) // 2]}" if len(words) > 1 else words[0]
    stops = ["", "never said", stop]  # an empty stop string is ignored
    cut = backend.chat("a big red house", max_tokens=12, logprobs=True, stop=stops).completions[0]
    assert cut.text == full.text[: full.text.index(stop)] and stop not in cut.text
    assert cut.finish_reason == "stop" and len(cut.text) < len(full.text)
    assert cut.logprobs is not None and full.logprobs is not None
    kept = len(cut.logprobs)
    assert cut.logprobs == full.logprobs[:kept]  # the tokens before the stop string
    assert " ".join(t.token for t in cut.logprobs if t.token not in SPECIAL) == cut.text.strip()
    assert stop.strip() in full.logprobs[kept].token  # the first token left out starts it


def test_a_chat_template_is_used_when_the_tokenizer_has_one(backend: HFBackend) -> None:
    backend.tokenizer.chat_template = TEMPLATE
    try:
        result = backend.chat([Message("user", "the cat")], max_tokens=2)
    finally:
        backend.tokenizer.chat_template = None
    rendered = backend.tokenizer("<user> the cat <assistant>")["input_ids"]
    assert result.usage.prompt_tokens == len(rendered) == 8
    plain = "user : the cat assistant :"
    assert result.usage.prompt_tokens != len(plain.split())


def test_embeddings_are_mean_pooled_over_real_tokens(backend: HFBackend) -> None:
    with metered() as meter:
        vectors = backend.embed(["the cat", "a big blue bird flew under the tree"])
    assert vectors.shape == (2, 16) and vectors.dtype == np.float32
    assert meter.total.calls == 1 and meter.total.prompt_tokens == 2 + 8
    alone = backend.embed(["the cat"])
    np.testing.assert_allclose(vectors[0], alone[0], atol=1e-5)  # padding does not leak in
    hidden = backend.hidden_states("the cat")
    assert hidden.shape == (2, 16) and hidden.dtype == np.float32
    np.testing.assert_allclose(hidden.mean(0), alone[0], atol=1e-5)


def test_logits_and_hidden_states_are_counted(backend: HFBackend) -> None:
    with metered() as meter:
        backend.next_token_logits("the cat sat")
        backend.hidden_states("the cat sat on")
    assert (meter.total.calls, meter.total.prompt_tokens) == (2, 7)


def test_a_missing_folder_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="found nothing at that path"):
        HFBackend(tmp_path / "absent")


def test_a_folder_without_weights_is_unavailable(tmp_path: Path, model_dir: Path) -> None:
    (tmp_path / "config.json").write_text((model_dir / "config.json").read_text())
    with pytest.raises(BackendUnavailable, match=r"config\.json and weights .*found a folder with"):
        HFBackend(tmp_path)
    (tmp_path / "config.json").unlink()
    with pytest.raises(BackendUnavailable, match=r"found a folder without config\.json"):
        HFBackend(tmp_path)


def test_a_broken_model_folder_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    (tmp_path / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(BackendUnavailable, match="cannot load a model from"):
        HFBackend(tmp_path)


def test_bad_options_are_config_errors(model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="dtype"):
        HFBackend(model_dir, dtype="float8")
    with pytest.raises(ConfigError, match="num_threads"):
        HFBackend(model_dir, num_threads=0)
    with pytest.raises(ConfigError, match="device"):
        HFBackend(model_dir, device="warp-drive")


def test_a_stop_string_ends_generation_early(backend: HFBackend) -> None:
    prompts = [" ".join(WORDS.split()[i : i + 3]) for i in range(0, 18, 2)]
    wordy = [p for p in prompts if len(backend.chat(p, max_tokens=12).text.split()) >= 3]
    assert wordy, "one of the prompts makes the tiny model write three words or more"
    full = backend.chat(wordy[0], max_tokens=12)
    words = full.text.split()
    cut = backend.chat(wordy[0], max_tokens=12, stop=[f" {words[1]}"])
    assert cut.text == full.text[: full.text.index(f" {words[1]}")]
    # it stopped at the stop string, before the words the model went on to write
    assert cut.usage.completion_tokens < full.usage.completion_tokens


def test_logits_through_a_cached_prefix_equal_a_full_pass(backend: HFBackend) -> None:
    import torch

    preamble = " ".join(WORDS.split() * 3)  # 60 words, shared by every question
    questions = ["the cat sat", "the dog ran on the mat", "a red bird", "the cat sat"]
    backend._prefix.clear()
    for question in questions:
        prompt = f"{preamble} {question}"
        got = backend.next_token_logits(prompt)
        enc = backend.tokenizer(prompt, return_tensors="pt")
        with torch.inference_mode():
            want = backend.model(**enc).logits[0, -1].float().numpy()
        np.testing.assert_allclose(got, want, atol=1e-4)
    kept = [len(prefix) for prefix in backend._prefix.caches]
    assert kept and all(n >= len(preamble.split()) for n in kept)  # the preamble was kept


def test_the_local_chat_template_folds_the_system_text_into_the_first_turn(
    backend: HFBackend,
) -> None:
    from governor.backends.hf import chat_prompt
    from governor.backends.local_model import CHAT_TEMPLATE

    backend.tokenizer.chat_template = CHAT_TEMPLATE
    try:
        messages = [
            Message("system", "be brief "),
            Message("user", "hi"),
            Message("assistant", "hello"),
            Message("system", "a note"),
        ]
        text, special = chat_prompt(backend.tokenizer, messages)
        alone, _ = chat_prompt(backend.tokenizer, [Message("system", "only this")])
    finally:
        backend.tokenizer.chat_template = None
    assert not special
    assert text == (
        "[BOS]<start_of_turn>user\nbe brief\n\nhi<end_of_turn>\n"
        "<start_of_turn>model\nhello<end_of_turn>\n"
        "<start_of_turn>user\na note<end_of_turn>\n<start_of_turn>model\n"
    )
    assert alone == "[BOS]<start_of_turn>user\nonly this<end_of_turn>\n<start_of_turn>model\n"
