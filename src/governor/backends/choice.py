"""A multiple-choice question put to a backend, answered in one counted call.

:func:`choose` is the one way every path that asks a model to pick among named options (a
driving letter A/B/C, a judge's YES/NO) reads the answer:

- a backend with ``next_token_logits`` (the local transformers backend): the logits of the first
  answer token, over the first tokens of each option's spellings ("A", " A", "yes", "Yes", ...);
  the model always names an option, and ``mass`` says how much of its probability fell on them;
- any other backend (HTTP): one chat request with log-probabilities; a completion's answer is its
  first token when that names an option, else the option its text names (``parse``), else the
  most likely option among the first token's alternatives; none of these is no answer. A server
  that refuses log-probabilities (HTTP 400 or 422) is asked again without them, once per backend
  (both requests counted), and then never asked for them again.

``n`` answers come from one call: drawn from the options' probabilities at ``temperature`` (the
most likely one, repeated, at 0) on the logits path, ``n`` completions on the HTTP path.
Imports the backend types and the error tree.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from governor.backends.base import Backend, Completion, Message
from governor.errors import BackendHTTPError, ConfigError, expected

Parse = Callable[[str], "str | None"]
_NO_LOGPROBS: weakref.WeakSet[Backend] = weakref.WeakSet()  # backends whose server refused them


@dataclass(frozen=True)
class Choice:
    """The answers of one question: an option or None (no answer) per draw, with the reply texts
    (the option itself on the logits path), the options' probabilities when known (normalised
    over the options) and ``mass``, the share of the model's probability on them."""

    answers: tuple[str | None, ...]
    texts: tuple[str, ...]
    probs: Mapping[str, float] | None
    mass: float | None
    method: str  # "logits", "logprobs" or "text"


def spellings(option: str) -> tuple[str, ...]:
    """The surface forms of an option's first token: as given, lower, capitalised, each with and
    without a leading space."""
    forms = dict.fromkeys((option, option.lower(), option.capitalize()))
    return tuple(f"{space}{form}" for form in forms for space in ("", " "))


def choose(
    backend: Backend,
    messages: str | Sequence[Message],
    options: Sequence[str],
    *,
    parse: Parse | None = None,
    n: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 5,
    seed: int | None = None,
) -> Choice:
    """Ask once; see the module doc. ``parse`` reads an option from a reply text (HTTP path)."""
    if len(set(options)) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
        raise ConfigError(f"options: {expected('two or more distinct names', options)}")
    logits_of = getattr(backend, "next_token_logits", None)
    if callable(logits_of):
        return _from_logits(backend, logits_of(messages), options, n, temperature, seed)
    asked = backend not in _NO_LOGPROBS
    try:
        result = backend.chat(
            messages,
            n=n,
            temperature=temperature,
            max_tokens=max_tokens,
            logprobs=asked,
            top_logprobs=10 if asked else 0,
        )
    except BackendHTTPError as exc:
        if not asked or exc.status not in (400, 422):
            raise
        _NO_LOGPROBS.add(backend)
        result = backend.chat(messages, n=n, temperature=temperature, max_tokens=max_tokens)
    return _from_completions(result.completions, options, parse)


def _from_logits(
    backend: Backend,
    logits: np.ndarray,
    options: Sequence[str],
    n: int,
    temperature: float,
    seed: int | None,
) -> Choice:
    tokenizer = getattr(backend, "tokenizer", None)
    if tokenizer is None:
        raise ConfigError(f"{backend.name}: {expected('a tokenizer beside its logits', None)}")
    ids = _first_token_ids(tokenizer, options)
    full = logits.astype(np.float64)
    full = full - full.max()
    log_total = math.log(float(np.exp(full).sum()))
    scores = np.array([np.logaddexp.reduce(full[ids[o]]) for o in options])
    mass = float(np.exp(np.logaddexp.reduce(scores) - log_total))
    probs = _softmax(scores)
    if temperature > 0:
        rng = np.random.default_rng(seed)
        drawn = rng.choice(len(options), size=n, p=_softmax(scores / temperature))
        answers = tuple(options[int(i)] for i in drawn)
    else:
        answers = (options[int(np.argmax(scores))],) * n
    shares = {o: float(p) for o, p in zip(options, probs, strict=True)}
    return Choice(answers, tuple(a or "" for a in answers), shares, mass, "logits")


def _first_token_ids(tokenizer: object, options: Sequence[str]) -> dict[str, list[int]]:
    """Each option's first-token ids over its spellings; an id two options share is dropped."""
    found: dict[str, set[int]] = {}
    for option in options:
        ids = set()
        for form in spellings(option):
            encoded = tokenizer(form, add_special_tokens=False)["input_ids"]  # type: ignore[operator]
            if encoded:
                ids.add(int(encoded[0]))
        found[option] = ids
    out = {}
    for option, ids in found.items():
        others = set().union(*(v for k, v in found.items() if k != option))
        out[option] = sorted(ids - others)
        if not out[option]:
            raise ConfigError(f"options: {expected('a first token of its own', option)}")
    return out


def _from_completions(
    completions: Sequence[Completion], options: Sequence[str], parse: Parse | None
) -> Choice:
    keys = {form.strip().lower(): o for o in options for form in spellings(o)}
    read = parse or (lambda text: keys.get(text.strip().lower()))
    answers: list[str | None] = []
    first_seen: dict[str, float] | None = None
    for completion in completions:
        tokens = completion.logprobs or ()
        seen: dict[str, float] = {}  # option -> its best log-probability as the first token
        heads = [(tokens[0].token, tokens[0].logprob), *tokens[0].top] if tokens else []
        for token, logprob in heads:
            option = keys.get(token.strip().lower())
            if option is not None:
                seen[option] = max(seen.get(option, -math.inf), logprob)
        first = keys.get(tokens[0].token.strip().lower()) if tokens else None
        answer = first or read(completion.text)
        if answer is None and seen:
            answer = max(seen, key=lambda o: seen[o])
        answers.append(answer)
        if first_seen is None and tokens:
            first_seen = seen
    texts = tuple(c.text for c in completions)
    if not first_seen:
        return Choice(tuple(answers), texts, None, None, "text")
    scores = np.array([first_seen.get(o, -math.inf) for o in options])
    probs = {o: float(p) for o, p in zip(options, _softmax(scores), strict=True)}
    mass = float(sum(math.exp(v) for v in first_seen.values()))
    return Choice(tuple(answers), texts, probs, min(mass, 1.0), "logprobs")


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - np.max(scores))
    return shifted / shifted.sum()
