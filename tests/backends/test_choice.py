"""choose(): one counted call per question, read from logits, log-probabilities or text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from governor.backends.base import Backend, ChatRequest, ChatResult, Completion, TokenLogprob
from governor.backends.choice import choose, spellings
from governor.backends.scripted import ScriptedBackend
from governor.errors import ConfigError
from governor.usage import Usage, metered, record_llm_call

VOCAB = ["A", " A", "B", " B", "C", " C", "a", "b", "c", "The", "Yes", "YES", "yes", "No", "NO"]


class Tokens:
    """A tokenizer that knows VOCAB as single tokens (first token of a longer word: its head)."""

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        for size in range(len(text), 0, -1):
            if text[:size] in VOCAB:
                return {"input_ids": [VOCAB.index(text[:size])]}
        return {"input_ids": []}


class LogitsBackend(Backend):
    """next_token_logits from a fixed vector, counted like the real one."""

    name = "logits"

    def __init__(self, logits: dict[str, float]) -> None:
        self.tokenizer = Tokens()
        self.vector = np.full(len(VOCAB) + 5, -30.0, dtype=np.float32)
        for token, value in logits.items():
            self.vector[VOCAB.index(token)] = value
        self.asked: list[Any] = []

    def next_token_logits(self, messages: Any) -> np.ndarray:
        self.asked.append(messages)
        record_llm_call(Usage(calls=1))
        return self.vector

    def _chat(self, request: ChatRequest) -> ChatResult:
        raise AssertionError("the logits path makes no chat call")


class LogprobsBackend(Backend):
    """Chat completions whose first token carries the given log-probabilities."""

    name = "logprobs"

    def __init__(self, replies: list[tuple[str, str, list[tuple[str, float]]]]) -> None:
        self.replies, self.requests = replies, []

    def _chat(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        completions = tuple(
            Completion(text, "stop", (TokenLogprob(first, top[0][1] if top else -1.0, tuple(top)),))
            for text, first, top in self.replies[: request.n]
        )
        return ChatResult(completions, Usage(calls=1), self.name)


def test_spellings_cover_case_and_a_leading_space():
    assert spellings("YES") == ("YES", " YES", "yes", " yes", "Yes", " Yes")
    assert spellings("A") == ("A", " A", "a", " a")


def test_logits_pick_the_most_likely_option_in_one_counted_call():
    backend = LogitsBackend({"A": 1.0, " B": 3.0, "b": 2.0, "C": 0.0, "The": 5.0})
    with metered() as meter:
        choice = choose(backend, "q", ["A", "B", "C"], n=3)
    assert choice.answers == ("B", "B", "B") and choice.method == "logits"
    assert meter.total.calls == 1 and len(backend.asked) == 1
    assert choice.probs is not None and choice.probs["B"] > choice.probs["A"] > choice.probs["C"]
    assert abs(sum(choice.probs.values()) - 1.0) < 1e-9
    assert choice.mass is not None and 0.1 < choice.mass < 0.9  # "The" took the rest


def test_logits_sampling_draws_n_answers_from_the_options_distribution():
    backend = LogitsBackend({"A": 0.0, "B": 0.0, "C": -30.0})
    choice = choose(backend, "q", ["A", "B", "C"], n=64, temperature=1.0, seed=3)
    assert set(choice.answers) == {"A", "B"}
    again = choose(backend, "q", ["A", "B", "C"], n=64, temperature=1.0, seed=3)
    assert again.answers == choice.answers


def test_yes_no_by_logits():
    backend = LogitsBackend({"Yes": 1.0, "NO": 2.5, "yes": 0.5})
    assert choose(backend, "q", ["YES", "NO"]).answers == ("NO",)


def test_the_http_path_reads_the_first_token_then_the_text_then_the_alternatives():
    backend = LogprobsBackend(
        [
            ("B", "B", [("B", -0.1), ("A", -2.0)]),
            ("The answer is C", "The", [("The", -0.2), ("A", -3.0), (" C", -2.5)]),
            ("The road", "The", [("The", -0.2), (" C", -2.5), ("A", -3.0)]),
        ]
    )

    def parse(text: str) -> str | None:
        return text[-1] if text.startswith("The answer is") else None

    with metered() as meter:
        choice = choose(backend, "q", ["A", "B", "C"], parse=parse, n=3, temperature=0.7)
    assert choice.answers == ("B", "C", "C") and choice.method == "logprobs"
    assert meter.total.calls == 1
    request = backend.requests[0]
    assert (request.n, request.logprobs, request.top_logprobs) == (3, True, 10)
    assert choice.probs is not None and choice.probs["B"] > 0.8
    assert choice.mass is not None and 0.9 < choice.mass <= 1.0


def test_the_text_path_without_logprobs_and_no_answer_is_none():
    backend = ScriptedBackend(["b", "maybe"])
    choice = choose(backend, "q", ["A", "B", "C"], n=2)
    assert choice.answers == ("B", None) and choice.method == "text"
    assert choice.probs is None and choice.texts == ("b", "maybe")


def test_options_must_be_distinct_and_have_a_first_token_of_their_own():
    with pytest.raises(ConfigError, match="two or more distinct"):
        choose(ScriptedBackend([]), "q", ["A", "A"])
    with pytest.raises(ConfigError, match="a first token of its own"):
        choose(LogitsBackend({}), "q", ["A", "Alpha"])


def test_a_server_refusing_logprobs_is_asked_again_without_them_once(
    server: Any, make_backend: Any
) -> None:
    from fake_openai_server import Reply

    server.script("/chat/completions", Reply(400, {"error": {"message": "logprobs unsupported"}}))
    backend = make_backend()
    with metered() as meter:
        first = choose(backend, "q", ["A", "B"], parse=lambda t: None)
        choose(backend, "q", ["A", "B"], parse=lambda t: None)
    bodies = [r.body for r in server.requests_to("/chat/completions")]
    assert [b.get("logprobs", False) for b in bodies] == [True, False, False]
    assert meter.total.calls == 3 and meter.total.failed == 1
    assert first.answers == (None,) and first.method == "text"  # "answer 0" names no option
