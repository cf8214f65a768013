"""Overlays as data: the YAML format and how it is read.

A file holds ``overlays`` (a list of rules) and optionally ``features`` (calibrated tone weights
and specificity maxima), ``provenance`` (how it was made) and ``version``. A rule's fields:

- ``name`` (unique), ``feature`` (a registered feature), ``bounds`` (``{min, max}``, one at least),
  ``epsilon`` (rigidity tolerance >= 0, in the feature's units), ``kind`` (prohibitory, transfer,
  permissive): required;
- ``condition`` (``"feature op number"``; required for transfer and permissive), ``scope``
  (``turn``, ``trajectory`` or ``{last_n: N}``), ``priority`` (int, higher first), ``severity``
  (low, medium, high, critical), ``descriptor`` and ``feedback`` (format templates over ``value``,
  ``min``, ``max``, ``epsilon``, ``deviation``, ``unit``, ``feature``, ``name``, ``condition``),
  ``target`` (permissive: the overlay it widens), ``calibration`` (a record, not used to judge),
  ``margin`` (adaptive rigidity: see :mod:`governor.overlays.rigidity`).

The shipped files: :data:`DEFAULT_OVERLAYS` (small talk), :data:`EMBED_OVERLAYS` (small talk
calibrated with the local embedding) and :data:`DEMAND_OVERLAYS` (the supervision's demand
overlays, :func:`demand_overlays`). Errors name the rule and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from governor.core import Severity
from governor.errors import ConfigError, SpecError, expected
from governor.files import load_mapping
from governor.overlays.features.base import (
    Embed,
    Resources,
    Tokenizer,
    get_feature,
)
from governor.overlays.rigidity import parse_margin
from governor.overlays.rules import KINDS, Condition, Overlay, template_slots
from governor.overlays.validate import (
    number,
    parse_bounds,
    parse_scope,
    parse_severity,
    resources_from,
)

_FIELDS = "name feature bounds epsilon kind condition scope priority severity descriptor feedback"
FIELDS = (*_FIELDS.split(), "target", "calibration", "margin")
REQUIRED = ("name", "feature", "bounds", "epsilon", "kind")
TOP_LEVEL = ("version", "provenance", "features", "overlays")
DEFAULT_OVERLAYS = Path(__file__).with_name("smalltalk.yaml")
EMBED_OVERLAYS = Path(__file__).with_name("smalltalk_embed.yaml")  # calibrated with LocalEmbed
DEMAND_OVERLAYS = Path(__file__).with_name(
    "demand.yaml"
)  # supervision: lower demand as affect worsens
_DEFAULT_SEVERITY = {"prohibitory": Severity.HIGH, "transfer": Severity.MEDIUM}


def load_overlays(
    path: str | Path = DEFAULT_OVERLAYS,
    *,
    tokenizer: Tokenizer | None = None,
    embed: Embed | None = None,
) -> list[Overlay]:
    """Read overlays from a YAML file (the shipped small-talk set by default)."""
    try:
        data = load_mapping(path)
    except ConfigError as exc:
        raise SpecError(str(exc)) from exc
    return parse_overlays(data, where=str(path), tokenizer=tokenizer, embed=embed)


def demand_overlays() -> list[Overlay]:
    """The shipped demand overlays (:data:`DEMAND_OVERLAYS`): lower demand as affect worsens
    (highest priority first)."""
    return load_overlays(DEMAND_OVERLAYS)


def load_resources(
    path: str | Path = DEFAULT_OVERLAYS,
    *,
    tokenizer: Tokenizer | None = None,
    embed: Embed | None = None,
) -> Resources:
    """The calibrated feature parameters of an overlay file, with the given models."""
    try:
        data = load_mapping(path)
    except ConfigError as exc:
        raise SpecError(str(exc)) from exc
    return resources_from(data.get("features") or {}, str(path), tokenizer, embed)


def parse_overlays(
    data: Mapping[str, Any],
    *,
    where: str = "overlays",
    tokenizer: Tokenizer | None = None,
    embed: Embed | None = None,
) -> list[Overlay]:
    """Validate a loaded document and build its overlays, permits attached to their targets."""
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}: {expected('a mapping with overlays', type(data).__name__)}")
    unknown = sorted(set(map(str, data)) - set(TOP_LEVEL))
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(unknown)}; expected {TOP_LEVEL}")
    rules = data.get("overlays")
    if not isinstance(rules, list) or not rules:
        raise SpecError(f"{where}: overlays: {expected('a non-empty list of rules', rules)}")
    res = resources_from(data.get("features") or {}, where, tokenizer, embed)
    overlays = [overlay_from(rule, i, where, res) for i, rule in enumerate(rules)]
    names = [o.name for o in overlays]
    for o in overlays:
        if names.count(o.name) > 1:
            raise SpecError(f"{where}: overlay {o.name!r}: field 'name': defined more than once")
    by_name = {o.name: o for o in overlays}
    for o in overlays:
        if o.kind != "permissive":
            continue
        target = by_name.get(o.target or "")
        if target is None or target.kind == "permissive":
            choices = ", ".join(n for n, t in by_name.items() if t.kind != "permissive")
            raise SpecError(
                f"{where}: overlay {o.name!r}: field 'target': {expected(f'one of {choices}', o.target)}"
            )
        if target.feature != o.feature:
            raise SpecError(
                f"{where}: overlay {o.name!r}: field 'feature': {expected(f'the target feature {target.feature!r}', o.feature)}"
            )
        by_name[target.name] = replace(target, permits=(*by_name[target.name].permits, o))
    return sorted(by_name.values(), key=lambda o: -o.priority)


def overlay_from(rule: Any, index: int, where: str, res: Resources) -> Overlay:
    """Build one overlay, naming the rule and the field in every error."""
    label = f"overlay #{index + 1}"
    if isinstance(rule, Mapping) and isinstance(rule.get("name"), str) and rule["name"]:
        label = f"overlay {rule['name']!r}"

    def fail(field: str, message: str) -> SpecError:
        return SpecError(f"{where}: {label}: field {field!r}: {message}")

    if not isinstance(rule, Mapping):
        raise SpecError(f"{where}: {label}: {expected('a mapping of fields', rule)}")
    unknown = sorted(set(rule) - set(FIELDS))
    if unknown:
        raise fail(unknown[0], f"unknown field; expected some of {', '.join(FIELDS)}")
    for name in REQUIRED:
        if rule.get(name) is None:
            raise fail(name, "missing")
    if not isinstance(rule["name"], str) or not rule["name"].strip():
        raise fail("name", expected("a non-empty string", rule["name"]))
    kind = rule["kind"]
    if kind not in KINDS:
        raise fail("kind", expected(" or ".join(KINDS), kind))
    try:
        feature = get_feature(str(rule["feature"]))
    except ConfigError as exc:
        raise fail("feature", str(exc)) from None
    bounds = parse_bounds(rule["bounds"], fail)
    epsilon = number(rule["epsilon"], "epsilon", fail)
    if epsilon < 0:
        raise fail("epsilon", expected("a number >= 0", rule["epsilon"]))
    condition = None
    if rule.get("condition") is not None:
        try:
            condition = Condition.parse(rule["condition"])
            get_feature(condition.feature)
        except (ValueError, ConfigError) as exc:
            raise fail("condition", str(exc)) from None
    elif kind in ("transfer", "permissive"):
        raise fail("condition", f"missing (a {kind} overlay applies under a condition)")
    scope = parse_scope(rule.get("scope", "turn"), fail)
    if scope.kind == "last_n" and feature.scope == "trajectory":
        raise fail("scope", f"{feature.name} is a trajectory feature; expected turn or trajectory")
    priority = rule.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise fail("priority", expected("an integer", priority))
    severity = _DEFAULT_SEVERITY.get(kind, Severity.LOW)
    if rule.get("severity") is not None:
        severity = parse_severity(rule["severity"], fail)
    calibration = rule.get("calibration") or {}
    if not isinstance(calibration, Mapping):
        raise fail("calibration", expected("a mapping", calibration))
    texts: dict[str, Any] = {k: str(rule[k]) for k in ("descriptor", "feedback") if k in rule}
    overlay = Overlay(
        name=rule["name"],
        feature=feature.name,
        bounds=bounds,
        epsilon=epsilon,
        kind=kind,
        scope=scope,
        priority=priority,
        condition=condition,
        target=_target(rule.get("target"), fail),
        severity=severity,
        resources=res,
        calibration=dict(calibration),
        margin=None if rule.get("margin") is None else parse_margin(rule["margin"], fail),
        **texts,
    )
    for name in ("descriptor", "feedback"):
        try:
            getattr(overlay, name).format(**template_slots(overlay, 1.0, bounds, 0.5))
        except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
            raise fail(name, f"bad template: {type(exc).__name__}: {exc}") from None
    method = calibration.get("method")
    if method is not None and method != feature.method_with(res):
        raise fail(
            "calibration",
            f"calibrated with {feature.name} computed by {method}, but these resources compute it"
            f" by {feature.method_with(res)}; recalibrate with the same tokenizer/embed",
        )
    return overlay


def _target(value: Any, fail: Callable[[str, str], SpecError]) -> str | None:
    """A permissive overlay's target: the name of another overlay."""
    if value is None or isinstance(value, str):
        return value
    raise fail("target", expected("the name of an overlay", value))
