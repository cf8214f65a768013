"""Guard policy files: the examples load; every bad file names the file, the path and the problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from guard_helpers import SMALLTALK_POLICY, TOOLS_POLICY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governor.errors import ConfigError, GovernorError
from governor.guard import load_policy, policy_from_mapping
from governor.guard.spec.propositions import SumProp, ToolProp, UserProp

BASE: dict[str, Any] = {
    "propositions": {"a": {"tool": "a"}, "b": {"tool": "b"}},
    "ltl": [{"name": "r", "text": "never a", "formula": "G !a", "verified": True}],
}


def test_the_examples_load() -> None:
    tools = load_policy(TOOLS_POLICY)
    assert [r.name for r in tools.ltl] == [
        "no_exfiltration", "verify_first", "transfer_cap", "confirm_after_delete",
    ]  # fmt: skip
    kinds = {p.name: type(p) for p in tools.vocabulary.props}
    assert kinds["total_over_100"] is SumProp and kinds["user_confirmed"] is UserProp
    assert kinds["any_tool_call"] is ToolProp and tools.overlays == ()
    assert tools.observer.max_regenerations == 2
    assert tools.upstream.backend_config({"OPENAI_API_KEY": "sk-1"}).api_key == "sk-1"
    small = load_policy(SMALLTALK_POLICY)
    assert small.overlays and small.ltl == () and small.observer.n_candidates == 2


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def with_(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


BAD = [
    ({"colour": 1}, "policy.yaml: unknown key(s) colour"),
    (with_(ltl=[{"name": "r", "formula": "G(a ->", "verified": True}]), "policy.yaml: ltl[0].formula: expected an operand"),
    (with_(ltl=[{"name": "r", "formula": "G(a -> F zz)"}]), "policy.yaml: ltl[0].formula: undeclared proposition(s) zz"),
    (with_(ltl=[{"name": "r", "formula": "G !a", "verified": "yes"}]), "policy.yaml: ltl[0].verified: expected true or false, found 'yes'"),
    (with_(ltl=[{"name": "r", "formula": "G !a", "extra": 1}]), "policy.yaml: ltl[0]: unknown key(s) extra"),
    (with_(ltl=[BASE["ltl"][0], BASE["ltl"][0]]), "policy.yaml: ltl[1].name: expected a name no other"),
    (with_(ltl={"r": "G !a"}), "policy.yaml: ltl: expected a list of constraints"),
    (with_(propositions={"u": {"user": "(unclosed"}}), "policy.yaml: propositions.u.user: expected a regular expression"),
    (with_(propositions={"a": {"tool": "a", "where": {"path": "x", "matches": "[z"}}}), "policy.yaml: propositions.a.where[0].matches: expected a regular expression"),
    (with_(propositions={"a": {"tool": "a", "where": {"path": "x", "op": "~", "value": 1}}}), "propositions.a.where[0].op: expected < or <="),
    (with_(propositions={"a": {"tool": "a", "where": {"path": "x", "op": ">", "value": "big"}}}), "propositions.a.where[0].value: expected a finite number, found 'big'"),
    (with_(propositions={"a": {"tool": "a", "user": "x"}}), "policy.yaml: propositions.a: expected exactly one of tool, sum, user, result or seen"),
    (with_(propositions={"a": {"sum": {"tool": "t", "path": "amount"}, "op": ">"}}), "policy.yaml: propositions.a: missing key value"),
    (with_(propositions={"G": {"tool": "g"}}), "policy.yaml: propositions.G: expected a proposition name"),
    (with_(propositions=["a"]), "policy.yaml: propositions: expected a mapping"),
    (with_(observer={"max_regenerations": "three"}), "policy.yaml: observer: max_regenerations: expected an integer"),
    (with_(observer={"n_candidates": 1, "arbiter": "x"}), "policy.yaml: observer: unknown key(s) arbiter"),
    (with_(upstream={"base_url": "ftp://x"}), "policy.yaml: upstream: base_url: expected an http"),
    (with_(upstream={"timeout_s": "soon"}), "policy.yaml: upstream.timeout_s: expected a finite number"),
    (with_(fallbacks={"tool_refused": "no"}), "policy.yaml: fallbacks: missing key(s) default"),
    (with_(fallbacks={"default": "no {who}"}), "policy.yaml: fallbacks.default: expected only the fields {constraint} and {reason}, found 'who'"),
    (with_(overlays="missing.yaml"), "policy.yaml: overlays: "),
    (with_(checks={"tool_calls": ["nope"]}), "policy.yaml: checks.tool_calls[0]: expected one of"),
    (with_(checks={"user": ["ltl"]}), "policy.yaml: checks.user: expected [] (checks on user input"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), BAD)
def test_a_bad_policy_names_the_file_and_the_path(tmp_path: Path, data: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_policy(write(tmp_path, data))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nothing\.yaml"):
        load_policy(tmp_path / "nothing.yaml")
    bad = tmp_path / "policy.yaml"
    bad.write_text("ltl: [", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"policy\.yaml: not valid YAML"):
        load_policy(bad)


def test_overlay_paths_are_relative_to_the_policy_file(tmp_path: Path) -> None:
    from governor.overlays.loader import DEFAULT_OVERLAYS

    (tmp_path / "mine.yaml").write_text(DEFAULT_OVERLAYS.read_text(encoding="utf-8"), "utf-8")
    policy = load_policy(write(tmp_path, {"overlays": "mine.yaml"}))
    assert policy.overlays_from == "mine.yaml" and len(policy.overlays) > 3


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=True)
    | st.sampled_from(["", "a", "G !a", "*", "(x", "{reason}", "smalltalk", "none", ">", "x.y"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["name", "formula", "tool", "sum", "user", "where", "path", "op",
                         "value", "default", "text", "a", "b", "verified", "matches"]),
        inner, max_size=4,
    ),
    max_leaves=12,
)  # fmt: skip
SECTIONS = st.sampled_from(
    ["upstream", "observer", "overlays", "propositions", "ltl", "fallbacks", "checks", "x"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(SECTIONS, VALUES, max_size=4))
def test_the_loader_raises_only_governor_errors(data: dict[str, Any]) -> None:
    data = {k: v for k, v in data.items() if not (k == "overlays" and v == "smalltalk")}
    try:
        policy_from_mapping(data, source="fuzz.yaml")
    except GovernorError as exc:
        assert str(exc).startswith("fuzz.yaml")
