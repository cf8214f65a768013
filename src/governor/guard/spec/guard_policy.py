"""Guard policies: what a guard enforces, read from a YAML file and validated.

A policy file (every section optional except ``fallbacks.default`` where fallbacks are given)::

    upstream:    {base_url, model, api_key_env, timeout_s, max_retries, temperature, max_tokens,
                  system_prompt}
    observer:    {n_candidates, max_regenerations, time_budget_s, stop_on_repeat}
    overlays:    smalltalk | demand | none | path/relative/to/the/policy.yaml
    propositions: {name: {tool: ...} | {sum: ...} | {user: ...} | {result: ...} | {seen: ...}}
    ltl:         [{name, text, formula, verified}]
    fallbacks:   {default: text, tool_refused: "... {constraint} ... {reason}", check_failed: text}
    checks:      {user: [], assistant: [overlays, ltl], tool_calls: [ltl]}
    supervision: {modes, graph, rules, gating, overrides, ...}  (see .mode_section)
    safety_value: {checkpoint, tool, argument, actions, observation, margin, recovery, ...}
                 (a learned safety value over one tool's calls; see .value_section)
    stream:      {chunk_tokens}                                  (see .stream_section)
    tools:       {offered, hide, not_in_parallel, groups: {group: [tool, ...]},
                  trusted: [tool | group:NAME]}   (the tools a reply may call; .tools_section)

Errors name the file, the path inside it (``policy.yaml: ltl[2].formula``), what was expected and
what was found; unknown keys are errors. A formula may use only declared propositions. With a
supervision section, ``checks.user`` names the state classifiers that read the user's input
(default: every shipped one that needs no setting); without one it must stay empty. Imports the
config, the error tree, the files helpers, the spec's parts, fields, stream, tools, mode and value
sections and propositions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governor.config import BackendConfig, ObserverConfig, from_mapping
from governor.errors import ConfigError, expected
from governor.files import load_mapping
from governor.guard.spec.fields import At, mapping, names, number, optional_text
from governor.guard.spec.mode_section import classifier_names, supervision_from
from governor.guard.spec.mode_spec import SupervisionSpec
from governor.guard.spec.parts import (
    DEFAULT_FALLBACKS,
    LTLRule,
    fallback_texts,
    ltl_rules,
    overlay_set,
)
from governor.guard.spec.propositions import Vocabulary, proposition_from
from governor.guard.spec.stream_section import StreamPolicy, stream_from
from governor.guard.spec.tools_section import ToolsPolicy, moved_keys, tools_from
from governor.guard.spec.value_section import SafetyValueSpec, safety_value_from
from governor.ltl.syntax import KEYWORDS, NAME
from governor.overlays.rules import Overlay

__all__ = ["DEFAULT_FALLBACKS", "Checks", "GuardPolicy", "LTLRule", "Upstream", "load_policy",
           "policy_from_mapping"]  # fmt: skip

SECTIONS = ("upstream", "observer", "overlays", "propositions", "ltl", "fallbacks", "checks",
            "supervision", "stream", "safety_value", "tools")  # fmt: skip
OBSERVER_KEYS = ("n_candidates", "max_regenerations", "time_budget_s", "stop_on_repeat")
CHECK_KEYS = ("user", "assistant", "tool_calls")
CHECK_GROUPS = ("overlays", "ltl")


@dataclass(frozen=True)
class Upstream:
    """The model the guard stands in front of, and how it is asked."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 2
    temperature: float = 0.7
    max_tokens: int = 512
    system_prompt: str | None = None

    def backend_config(self, environ: Mapping[str, str] | None = None) -> BackendConfig:
        """The endpoint's config, the API key read from the environment variable named."""
        env = os.environ if environ is None else environ
        key = env.get(self.api_key_env) if self.api_key_env else None
        return BackendConfig(
            base_url=self.base_url,
            model=self.model,
            api_key=key or None,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
        )


UPSTREAM_KEYS = tuple(Upstream.__dataclass_fields__)


@dataclass(frozen=True)
class Checks:
    """Which checks judge the user's input, a text reply and a tool-call reply (group names
    ``overlays`` and ``ltl``, or single constraint names)."""

    user: tuple[str, ...] = ()
    assistant: tuple[str, ...] = ("overlays", "ltl")
    tool_calls: tuple[str, ...] = ("ltl",)

    def runs(self, where: str, name: str, group: str) -> bool:
        chosen = self.assistant if where == "assistant" else self.tool_calls
        return group in chosen or name in chosen


@dataclass(frozen=True)
class GuardPolicy:
    """A validated policy; build it with :func:`load_policy` or :func:`policy_from_mapping`."""

    source: str = "<policy>"
    upstream: Upstream = field(default_factory=Upstream)
    observer: ObserverConfig = field(default_factory=ObserverConfig)
    overlays_from: str | None = None
    overlays: tuple[Overlay, ...] = ()
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    ltl: tuple[LTLRule, ...] = ()
    fallbacks: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_FALLBACKS))
    checks: Checks = field(default_factory=Checks)
    supervision: SupervisionSpec | None = None
    stream: StreamPolicy = field(default_factory=StreamPolicy)
    safety_value: SafetyValueSpec | None = None
    tools: ToolsPolicy = field(default_factory=ToolsPolicy)


def load_policy(path: str | Path) -> GuardPolicy:
    """The policy in the YAML (or JSON) file ``path``, validated."""
    path = Path(path)
    try:
        data = load_mapping(path)
    except ConfigError as exc:
        raise ConfigError(f"policy {exc}") from None
    return policy_from_mapping(data, source=path.name, base_dir=path.parent)


def policy_from_mapping(
    data: Any, *, source: str = "<policy>", base_dir: str | Path = "."
) -> GuardPolicy:
    """The policy in ``data`` (a mapping as read from a file named ``source``)."""
    at = At(source)
    if isinstance(data, Mapping):
        moved_keys(data, at)
    top = mapping(data, at, SECTIONS)
    base = Path(base_dir)
    tools = tools_from(top.get("tools"), at.key("tools"))
    vocabulary = _vocabulary(
        top.get("propositions") or {}, at.key("propositions"), tools.groups, tools.trusted
    )
    ltl = ltl_rules(top.get("ltl") or [], at.key("ltl"), vocabulary)
    overlays_from, overlays = overlay_set(top.get("overlays"), at.key("overlays"), base)
    fallbacks = fallback_texts(top.get("fallbacks"), at.key("fallbacks"))
    raw_checks = mapping(top.get("checks") or {}, at.key("checks"), CHECK_KEYS)
    supervision = None
    if top.get("supervision") is not None:
        user = raw_checks.get("user")
        supervision = supervision_from(
            top["supervision"],
            at.key("supervision"),
            vocabulary=vocabulary,
            overlays=(overlays_from, overlays),
            fallbacks=fallbacks,
            base=base,
            classifiers=None if user is None else classifier_names(user, at.key("checks.user")),
        )
        _distinct_rules(ltl, supervision, at.key("supervision"))
    taken = frozenset(r.name for r in ltl) | {o.name for o in overlays}
    safety_value = safety_value_from(top.get("safety_value"), at.key("safety_value"), base,
                                     taken=taken, supervised=supervision is not None)  # fmt: skip
    return GuardPolicy(
        source=source,
        upstream=_upstream(top.get("upstream") or {}, at.key("upstream")),
        observer=_observer(top.get("observer") or {}, at.key("observer")),
        overlays_from=overlays_from,
        overlays=overlays,
        vocabulary=vocabulary,
        ltl=ltl,
        fallbacks=fallbacks,
        checks=_checks(raw_checks, at.key("checks"), ltl, overlays, supervision),
        supervision=supervision,
        stream=stream_from(top.get("stream"), at.key("stream")),
        safety_value=safety_value,
        tools=tools,
    )


def _distinct_rules(ltl: tuple[LTLRule, ...], spec: SupervisionSpec, at: At) -> None:
    """Every LTL rule's name, the policy's and each mode's, is its own (one memory slot each)."""
    seen = {r.name: "ltl" for r in ltl}
    for m in spec.modes:
        for i, r in enumerate(m.ltl):
            if r.name in seen:
                where = at.key("modes").key(m.name).key("ltl").index(i).key("name")
                where.fail(f"a name no other LTL rule has (taken in {seen[r.name]})", r.name)
            seen[r.name] = f"modes.{m.name}.ltl"


def _upstream(raw: Any, at: At) -> Upstream:
    data = mapping(raw, at, UPSTREAM_KEYS)
    for key in ("base_url", "model", "api_key_env", "system_prompt"):
        optional_text(data.get(key), at.key(key))
    for key in ("timeout_s", "temperature"):
        if key in data:
            number(data[key], at.key(key))
    for key in ("max_retries", "max_tokens"):
        value = data.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            at.key(key).fail("an integer >= 0", value)
    up = Upstream(**data)
    try:
        up.backend_config({})
    except ConfigError as exc:
        raise at.error(str(exc)) from None
    if not 0.0 <= up.temperature <= 5.0:
        at.key("temperature").fail("a number in [0, 5]", up.temperature)
    return up


def _observer(raw: Any, at: At) -> ObserverConfig:
    data = mapping(raw, at, OBSERVER_KEYS)
    return from_mapping(ObserverConfig, dict(data), str(at))


def _vocabulary(
    raw: Any, at: At, groups: Mapping[str, frozenset[str]], trusted: frozenset[str]
) -> Vocabulary:
    if not isinstance(raw, Mapping):
        at.fail("a mapping of proposition names to definitions", raw)
    props = []
    for name, spec in raw.items():
        where = at.key(str(name))
        if not isinstance(name, str) or not NAME.fullmatch(name) or name in KEYWORDS:
            where.fail("a proposition name (letters, digits, _; not an LTL keyword)", name)
        props.append(proposition_from(name, spec, where, groups))
    return Vocabulary(tuple(props), groups, trusted)


def _checks(
    data: Mapping[str, Any],
    at: At,
    ltl: tuple[LTLRule, ...],
    overlays: tuple[Overlay, ...],
    supervision: SupervisionSpec | None,
) -> Checks:
    known = {*CHECK_GROUPS, *(r.name for r in ltl), *(o.name for o in overlays)}
    if supervision is not None:
        for m in supervision.modes:
            known |= {*(r.name for r in m.ltl), *(o.name for o in m.overlays)}
    picked: dict[str, tuple[str, ...]] = {}
    for key in ("assistant", "tool_calls"):
        if key not in data:
            continue
        chosen = names(data[key] or [], at.key(key))
        for i, name in enumerate(chosen):
            if name not in known:
                at.key(key).index(i).fail(f"one of {', '.join(sorted(known))}", name)
        picked[key] = chosen
    if supervision is not None:
        picked["user"] = supervision.classifiers
    elif data.get("user"):
        raise at.key("user").error(
            expected("[] (checks on user input need a supervision section)", list(data["user"]))
        )
    return Checks(**picked)
