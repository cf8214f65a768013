"""Guard policies: what a guard enforces, read from a YAML file and validated.

A policy file (every section optional except ``fallbacks.default`` where fallbacks are given)::

    upstream:    {base_url, model, api_key_env, timeout_s, max_retries, temperature, max_tokens,
                  system_prompt}
    observer:    {n_candidates, max_regenerations, time_budget_s, stop_on_repeat}
    overlays:    smalltalk | none | path/relative/to/the/policy.yaml
    propositions: {name: {tool: ...} | {sum: ...} | {user: ...}}    (see governor.guard.tools)
    ltl:         [{name, text, formula, verified}]
    fallbacks:   {default: text, tool_refused: "... {constraint} ... {reason}", check_failed: text}
    checks:      {user: [], assistant: [overlays, ltl], tool_calls: [ltl]}

Errors name the file, the path inside it (``policy.yaml: ltl[2].formula``), what was expected and
what was found; unknown keys are errors. A formula may use only declared propositions.
Imports the config, the error tree, the files helpers, the LTL parser, the overlay loader and the
guard's tools vocabulary.
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governor.config import BackendConfig, ObserverConfig, from_mapping
from governor.errors import ConfigError, GovernorError, expected
from governor.files import load_mapping
from governor.guard.policy_schema import At, boolean, mapping, names, number, optional_text, text
from governor.guard.tools import Vocabulary, proposition_from
from governor.ltl.parser import parse
from governor.ltl.syntax import KEYWORDS, NAME, Formula
from governor.overlays.loader import DEFAULT_OVERLAYS, load_overlays
from governor.overlays.rules import Overlay

SECTIONS = ("upstream", "observer", "overlays", "propositions", "ltl", "fallbacks", "checks")
OBSERVER_KEYS = ("n_candidates", "max_regenerations", "time_budget_s", "stop_on_repeat")
FALLBACK_KEYS = ("default", "tool_refused", "check_failed")
TEMPLATE_FIELDS = frozenset({"constraint", "reason"})
CHECK_GROUPS = ("overlays", "ltl")
DEFAULT_FALLBACKS: Mapping[str, str] = {
    "default": "Sorry, I can't help with that.",
    "tool_refused": 'I did not run that action: it would break the rule "{constraint}".',
    "check_failed": "Sorry, something went wrong on my side; I did not do anything.",
}


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


@dataclass(frozen=True)
class LTLRule:
    """One natural-language constraint and its formula over the policy's propositions."""

    name: str
    text: str
    formula: Formula
    verified: bool = False


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
    top = mapping(data, at, SECTIONS)
    vocabulary = _vocabulary(top.get("propositions") or {}, at.key("propositions"))
    ltl = _ltl(top.get("ltl") or [], at.key("ltl"), vocabulary)
    overlays_from, overlays = _overlays(top.get("overlays"), at.key("overlays"), Path(base_dir))
    return GuardPolicy(
        source=source,
        upstream=_upstream(top.get("upstream") or {}, at.key("upstream")),
        observer=_observer(top.get("observer") or {}, at.key("observer")),
        overlays_from=overlays_from,
        overlays=overlays,
        vocabulary=vocabulary,
        ltl=ltl,
        fallbacks=_fallbacks(top.get("fallbacks"), at.key("fallbacks")),
        checks=_checks(top.get("checks") or {}, at.key("checks"), ltl, overlays),
    )


def _upstream(raw: Any, at: At) -> Upstream:
    keys = [f for f in Upstream.__dataclass_fields__]
    data = mapping(raw, at, keys)
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


def _overlays(raw: Any, at: At, base: Path) -> tuple[str | None, tuple[Overlay, ...]]:
    if raw is None or raw == "none":
        return None, ()
    name = text(raw, at)
    path = DEFAULT_OVERLAYS if name == "smalltalk" else base / name
    try:
        return name, tuple(load_overlays(path))
    except GovernorError as exc:
        raise at.error(f"{path}: {exc}") from None


def _vocabulary(raw: Any, at: At) -> Vocabulary:
    if not isinstance(raw, Mapping):
        at.fail("a mapping of proposition names to definitions", raw)
    props = []
    for name, spec in raw.items():
        where = at.key(str(name))
        if not isinstance(name, str) or not NAME.fullmatch(name) or name in KEYWORDS:
            where.fail("a proposition name (letters, digits, _; not an LTL keyword)", name)
        props.append(proposition_from(name, spec, where))
    return Vocabulary(tuple(props))


def _ltl(raw: Any, at: At, vocabulary: Vocabulary) -> tuple[LTLRule, ...]:
    if not isinstance(raw, list):
        at.fail("a list of constraints", raw)
    rules: list[LTLRule] = []
    for i, entry in enumerate(raw):
        where = at.index(i)
        data = mapping(entry, where, ("name", "text", "formula", "verified"), ("name", "formula"))
        name = text(data["name"], where.key("name"))
        if any(r.name == name for r in rules):
            where.key("name").fail("a name no other constraint has", name)
        source = text(data["formula"], where.key("formula"))
        try:
            formula = parse(source)
        except GovernorError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise where.key("formula").error(first) from None
        unknown = sorted(formula.atom_labels() - vocabulary.names)
        if unknown:
            declared = ", ".join(sorted(vocabulary.names)) or "none"
            raise where.key("formula").error(
                f"undeclared proposition(s) {', '.join(unknown)}; declared: {declared}"
            )
        sentence = text(data.get("text", name), where.key("text"))
        verified = boolean(data.get("verified", False), where.key("verified"))
        rules.append(LTLRule(name, sentence, formula, verified))
    return tuple(rules)


def _fallbacks(raw: Any, at: At) -> dict[str, str]:
    if raw is None:
        return dict(DEFAULT_FALLBACKS)
    data = mapping(raw, at, FALLBACK_KEYS, ("default",))
    out = dict(DEFAULT_FALLBACKS)
    for key, value in data.items():
        template = text(value, at.key(key))
        try:
            used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        except ValueError as exc:
            what = "expected a template over {constraint} and {reason}"
            raise at.key(key).error(f"{what}, found {template!r} ({exc})") from None
        if used - TEMPLATE_FIELDS:
            bad = ", ".join(sorted(used - TEMPLATE_FIELDS))
            at.key(key).fail("only the fields {constraint} and {reason}", bad)
        out[key] = template
    return out


def _checks(raw: Any, at: At, ltl: tuple[LTLRule, ...], overlays: tuple[Overlay, ...]) -> Checks:
    data = mapping(raw, at, ("user", "assistant", "tool_calls"))
    known = {*CHECK_GROUPS, *(r.name for r in ltl), *(o.name for o in overlays)}
    picked: dict[str, tuple[str, ...]] = {}
    for key in ("user", "assistant", "tool_calls"):
        if key not in data:
            continue
        chosen = names(data[key] or [], at.key(key))
        for i, name in enumerate(chosen):
            if name not in known:
                at.key(key).index(i).fail(f"one of {', '.join(sorted(known))}", name)
        picked[key] = chosen
    if picked.get("user"):
        raise at.key("user").error(
            f"{expected('[] (checks on user input are not supported yet)', list(picked['user']))}"
        )
    return Checks(**picked)
