"""The real local model through HFBackend: load, greedy, sampling, logprobs, embeddings, choices.

Tiny ``max_tokens`` keep each test to seconds on one thread.
"""

from __future__ import annotations

import numpy as np
import pytest

from governor.backends import Message
from governor.backends.choice import choose
from governor.backends.hf import HFBackend
from governor.backends.local_model import END_OF_TURN
from governor.usage import metered

pytestmark = pytest.mark.model

HELLO = [Message("system", "Be brief."), Message("user", "Hi! How are you today?")]


def test_the_fetched_folder_loads_with_its_chat_template(local_model: HFBackend) -> None:
    assert local_model.name == "hf:gemma3-270m"
    assert local_model.model.config.model_type == "gemma3_text"
    assert local_model.load_seconds < 120  # type: ignore[attr-defined]
    assert local_model.tokenizer.convert_tokens_to_ids(END_OF_TURN) in local_model._eos
    text = local_model.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in HELLO],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert text == (
        "<bos><start_of_turn>user\nBe brief.\n\nHi! How are you today?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_greedy_output_is_deterministic_and_bounded(local_model: HFBackend) -> None:
    with metered() as meter:
        first = local_model.chat(HELLO, max_tokens=6)
        second = local_model.chat(HELLO, max_tokens=6)
    assert first.text == second.text and first.text.strip()
    assert 1 <= first.usage.completion_tokens <= 6 and meter.total.calls == 2


def test_a_stop_sequence_cuts_the_reply(local_model: HFBackend) -> None:
    result = local_model.chat(HELLO, max_tokens=12, stop=["\n", "."])
    assert "\n" not in result.text and "." not in result.text


def test_n_samples_in_one_call(local_model: HFBackend) -> None:
    import torch

    torch.manual_seed(0)
    with metered() as meter:
        result = local_model.chat(HELLO, n=3, temperature=1.0, max_tokens=4)
    assert len(result.completions) == 3 and meter.total.calls == 1
    assert len({c.text for c in result.completions}) > 1


def test_logprobs_match_the_next_token_logits(local_model: HFBackend) -> None:
    result = local_model.chat(HELLO, max_tokens=2, top_logprobs=3)
    tokens = result.completions[0].logprobs
    assert tokens is not None and len(tokens) == result.usage.completion_tokens
    assert all(t.logprob <= 0 and len(t.top) == 3 for t in tokens)
    logits = local_model.next_token_logits(HELLO)
    logp = logits - np.logaddexp.reduce(logits.astype(np.float64))
    assert tokens[0].logprob == pytest.approx(float(logp.max()), abs=1e-3)


def test_embeddings_one_row_per_text(local_model: HFBackend) -> None:
    texts = ["I like dogs.", "The tax law changed last year in several states."]
    vectors = local_model.embed(texts)
    assert vectors.shape == (2, local_model.model.config.hidden_size)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(local_model.embed(texts[:1])[0], vectors[0], atol=1e-3)


def test_a_yes_no_question_is_answered_from_the_logits_in_one_call(local_model: HFBackend) -> None:
    with metered() as meter:
        choice = choose(
            local_model, [Message("user", "Is water wet? Answer YES or NO.")], ["YES", "NO"]
        )
    assert choice.answers[0] in ("YES", "NO") and meter.total.calls == 1
    assert choice.mass is not None and 0.0 < choice.mass <= 1.0
