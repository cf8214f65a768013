"""What `governor bench serve` measures with: the three check sets (overlays, ten LTL rules over
tool calls, both), their policies, the request bodies and the bounds of a cell."""

from __future__ import annotations

from typing import Any

from governor.guard import GuardPolicy, policy_from_mapping

CHECK_SETS = ("overlays", "ltl", "both")


TEXT_REPLY = "Oh nice, that sounds like a lovely weekend! What did you enjoy most about it?"

OPENERS = (
    "Oh nice", "How lovely", "Oh wow", "That is great", "Sounds fun", "What a treat",
    "How nice", "Oh cool", "Lucky you", "That is lovely", "Wonderful", "Oh great",
    "How fun", "Nice one", "That is so nice", "Oh how lovely",
)  # fmt: skip
MIDDLES = (
    "that sounds like a lovely weekend!", "a lake walk is always good for the soul.",
    "hiking by the water sounds so calm.", "fresh air by a lake is the best.",
    "that must have been a peaceful day.", "I love a good trail by the water.",
    "lakes are lovely this time of year.", "a hike is a great way to spend a weekend.",
    "that sounds like a calm day out.", "being outdoors like that is so refreshing.",
    "a weekend on the trails sounds perfect.", "the views must have been pretty.",
    "that sounds like a great little trip.", "walking by a lake sounds dreamy.",
    "I bet the weather was nice for it.", "that is a nice way to unwind.",
)  # fmt: skip
QUESTIONS = (
    "What did you enjoy most about it?", "Who did you go with?", "How long was the hike?",
    "Did you see any wildlife?", "Was it busy out there?", "Would you go back again?",
    "How was the weather?", "Did you bring some snacks?", "Was the trail steep?",
    "Do you hike often?", "What was the view like?", "Did you take any photos?",
    "How far did you walk?", "Was the water cold?", "Did you stop for a swim?",
    "What lake was it?",
)  # fmt: skip


def reply_text(k: int) -> str:
    """The ``k``-th small-talk reply the stub gives: 4,096 different ones (16 x 16 x 16), in an
    order that repeats none within 4,096 calls, so that no per-text cache of the guard sees the
    same reply twice in a bench cell (real replies differ; a repeated one would flatter it)."""
    i = (k * 2654435761) % 4096  # an odd multiplier: a bijection of 0..4095
    return f"{OPENERS[i % 16]}, {MIDDLES[(i // 16) % 16]} {QUESTIONS[i // 256]}"


USER_TEXT = "I went hiking by the lake this weekend."


TOOL_NAMES = (
    "search",
    "read_file",
    "write_file",
    "send_email",
    "delete_file",
    "read_secret",
    "verify_identity",
    "transfer_funds",
)


TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in TOOL_NAMES
]


RULES = [
    ("no_exfiltration", "G(read_secret -> G !send_email)"),
    ("verify_first", "!transfer_funds W verify_identity"),
    ("transfer_cap", "G !total_over_100"),
    ("confirm_after_delete", "G(delete_file -> WX(!any_tool_call W user_confirmed))"),
    ("read_before_write", "!write_file W read_file"),
    ("no_delete_after_secret", "G(read_secret -> G !delete_file)"),
    ("no_email_after_delete", "G(delete_file -> G !send_email)"),
    ("verify_before_secret", "!read_secret W verify_identity"),
    ("no_transfer_after_email", "G(send_email -> G !transfer_funds)"),
    ("delete_only_when_confirmed", "G(delete_file -> user_confirmed)"),
]


CELL_SECONDS = 120.0


def bench_policy(checks: str, upstream_url: str) -> GuardPolicy:
    """The policy of a check set, in front of the stub (no retries, no API key)."""
    return policy_from_mapping(policy_data(checks, upstream_url), source=f"<bench serve: {checks}>")


def policy_data(checks: str, upstream_url: str) -> dict[str, Any]:
    """:func:`bench_policy` as the mapping a policy file holds."""
    from governor.serve.served_policy import SMALLTALK

    overlays = checks in ("overlays", "both")
    ltl = checks in ("ltl", "both")
    data: dict[str, Any] = {
        "upstream": {
            **SMALLTALK["upstream"],
            "base_url": upstream_url,
            "model": "stub",
            "api_key_env": None,
            "max_retries": 0,
            "timeout_s": 30,
        },
        "observer": SMALLTALK["observer"] if overlays else {"n_candidates": 1},
        "overlays": "smalltalk" if overlays else "none",
        "fallbacks": {"default": "Oh nice. How about you?"},
        "checks": {
            "assistant": [g for g, on in (("overlays", overlays), ("ltl", ltl)) if on],
            "tool_calls": ["ltl"] if ltl else [],
        },
    }
    if ltl:
        data["propositions"] = PROPOSITIONS
        data["ltl"] = [{"name": n, "formula": f, "verified": True} for n, f in RULES]
    return data


def request_body(checks: str) -> dict[str, Any]:
    """The one request of a check set: a tool-using turn for ``ltl``, small talk otherwise."""
    body: dict[str, Any] = {"model": "stub", "messages": [{"role": "user", "content": USER_TEXT}]}
    if checks == "ltl":
        body["messages"] = [{"role": "user", "content": "find trails by the lake"}]
        body["tools"] = TOOLS
    return body


PROPOSITIONS: dict[str, Any] = {
    **{n: {"tool": n} for n in TOOL_NAMES},
    "any_tool_call": {"tool": "*"},
    "total_over_100": {
        "sum": {"tool": "transfer_funds", "path": "amount"},
        "op": ">",
        "value": 100,
    },
    "user_confirmed": {"user": r"(?i)^\s*(yes|confirm|go ahead)\b"},
}
