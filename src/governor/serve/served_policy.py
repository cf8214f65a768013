"""The policy served when none is given, and the command line's upstream overrides.

:func:`default_policy` is the shipped small-talk overlays policy (the content of
``examples/policies/smalltalk.yaml``, built here so that an installed package needs no file);
:func:`with_upstream` replaces a policy's upstream base URL and model. Imports the guard's
public facade.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from governor.guard import GuardPolicy, policy_from_mapping

SMALLTALK: dict[str, Any] = {
    "upstream": {
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "my-chat-model",
        "api_key_env": "OPENAI_API_KEY",
        "temperature": 0.7,
        "max_tokens": 200,
        "system_prompt": (
            "You are a friendly companion who engages in casual small talk. Keep replies brief,"
            " light and informal; stay on what the other person is talking about."
        ),
    },
    "observer": {"n_candidates": 2, "max_regenerations": 3, "time_budget_s": 30},
    "overlays": "smalltalk",
    "fallbacks": {"default": "Oh nice. How about you?"},
    "checks": {"assistant": ["overlays"]},
}


def default_policy() -> GuardPolicy:
    """The shipped small-talk overlays policy."""
    return policy_from_mapping(SMALLTALK, source="<built-in smalltalk policy>")


def with_upstream(
    policy: GuardPolicy, *, base_url: str | None = None, model: str | None = None
) -> GuardPolicy:
    """``policy`` with its upstream's base URL and/or model replaced (None keeps it)."""
    up = policy.upstream
    return replace(
        policy,
        upstream=replace(
            up,
            base_url=up.base_url if base_url is None else base_url,
            model=up.model if model is None else model,
        ),
    )
