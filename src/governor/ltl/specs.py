"""Constraint specification files: the formulas a person has accepted, for agents to monitor.

A file is YAML (or JSON) of the form::

    constraints:
      - text: you have to enter living room before bathroom
        formula: "!agent_at(bathroom) W agent_at(living_room)"
        prefix: "W ! agent_at(bathroom) agent_at(living_room)"
        verified: true
        method: offline
        grounding: {enter living room: agent_at(living_room), bathroom: agent_at(bathroom)}

``text``, ``formula`` and ``verified`` are required; ``verified`` is true only for specs a person
accepted after seeing the verification view. ``prefix``, when present, must agree with
``formula``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from governor.errors import ConfigError, SpecError, expected
from governor.files import load_mapping
from governor.ltl.parser import parse, parse_prefix, to_prefix
from governor.ltl.syntax import Formula

REQUIRED = ("text", "formula", "verified")


@dataclass(frozen=True)
class Spec:
    """One constraint: its sentence, its formula, and whether a person verified the formula."""

    text: str
    formula: Formula
    verified: bool
    method: str = "offline"
    grounding: dict[str, str] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        return to_prefix(self.formula)

    def entry(self) -> dict[str, Any]:
        """The spec as a file entry."""
        return {
            "text": self.text,
            "formula": str(self.formula),
            "prefix": self.prefix,
            "verified": self.verified,
            "method": self.method,
            "grounding": dict(self.grounding),
        }


def _field(entry: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = entry[key]
    if not isinstance(value, kind):
        raise SpecError(f"{where}.{key}: {expected(kind.__name__, value)}")
    return value


def _spec(entry: Any, where: str) -> Spec:
    if not isinstance(entry, Mapping):
        raise SpecError(f"{where}: {expected('a mapping with ' + ', '.join(REQUIRED), entry)}")
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        raise SpecError(
            f"{where}: missing field {', '.join(missing)} (expected {', '.join(REQUIRED)})"
        )
    text = _field(entry, "text", str, where)
    try:
        formula = parse(_field(entry, "formula", str, where))
    except SpecError as exc:
        raise SpecError(f"{where}.formula: {exc}") from None
    if entry.get("prefix") is not None:
        try:
            other = parse_prefix(_field(entry, "prefix", str, where))
        except SpecError as exc:
            raise SpecError(f"{where}.prefix: {exc}") from None
        if other != formula:
            raise SpecError(f"{where}: prefix {expected('the same formula as formula', other)}")
    grounding = entry.get("grounding") or {}
    if not isinstance(grounding, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in grounding.items()
    ):
        raise SpecError(f"{where}.grounding: {expected('a mapping of phrases to text', grounding)}")
    method = entry.get("method", "offline")
    if not isinstance(method, str):
        raise SpecError(f"{where}.method: {expected('str', method)}")
    return Spec(text, formula, _field(entry, "verified", bool, where), method, dict(grounding))


def load_specs(path: str | Path) -> list[Spec]:
    """The specs of a file, every entry checked; errors name the entry and the field."""
    data = load_mapping(path)
    items = data.get("constraints")
    if not isinstance(items, list):
        raise SpecError(f"{path}: constraints: {expected('a list of constraints', items)}")
    return [_spec(entry, f"{path}: constraints[{i}]") for i, entry in enumerate(items)]


def append_specs(path: str | Path, specs: Iterable[Spec]) -> list[Spec]:
    """Add specs to the file (created if missing); returns everything it now holds."""
    path = Path(path)
    held = load_specs(path) if path.exists() else []
    held += list(specs)
    text = yaml.safe_dump(
        {"constraints": [s.entry() for s in held]}, sort_keys=False, allow_unicode=True
    )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
    return held


def monitor_specs(specs: Iterable[Spec]) -> list[tuple[str, str, Formula]]:
    """``(name, text, formula)`` triples for :meth:`MonitorSet.from_specs` (names ``c1``, ...)."""
    return [(f"c{i}", s.text, s.formula) for i, s in enumerate(specs, 1)]
