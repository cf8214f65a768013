"""Parts of a policy file that appear at its top and again inside each supervision mode: LTL rules
over the policy's propositions, an overlay set, and fallback texts.

Each reader takes the raw value and its place in the file (:class:`~.fields.At`) and
raises a :class:`~governor.errors.ConfigError` naming the file, the path inside it, what was
expected and what was found. Imports the error tree, the LTL parser, the overlay loader, the
shipped demand overlays of the supervision package, the spec's propositions and the
spec's fields.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governor.errors import GovernorError
from governor.guard.spec.fields import At, boolean, mapping, text
from governor.guard.spec.propositions import Vocabulary
from governor.ltl.parser import parse
from governor.ltl.syntax import Formula
from governor.overlays.loader import DEFAULT_OVERLAYS, load_overlays
from governor.overlays.rules import Overlay
from governor.supervision import DEMAND_OVERLAYS

FALLBACK_KEYS = ("default", "tool_refused", "check_failed")
LTL_RULE_KEYS = ("name", "text", "formula", "verified", "on_live_sessions")
ON_LIVE_SESSIONS = ("start", "replay")
"""How a rule added to the policy (or whose formula changed) joins a session already under way:
monitored from the session's current step, or replayed over its stored history first."""
TEMPLATE_FIELDS = frozenset({"constraint", "reason"})
DEFAULT_FALLBACKS: Mapping[str, str] = {
    "default": "Sorry, I can't help with that.",
    "tool_refused": 'I did not run that action: it would break the rule "{constraint}".',
    "check_failed": "Sorry, something went wrong on my side; I did not do anything.",
}
SHIPPED_OVERLAYS: Mapping[str, Path] = {"smalltalk": DEFAULT_OVERLAYS, "demand": DEMAND_OVERLAYS}
"""Overlay sets a policy names instead of giving a file."""


@dataclass(frozen=True)
class LTLRule:
    """One natural-language constraint and its formula over the policy's propositions."""

    name: str
    text: str
    formula: Formula
    verified: bool = False
    on_live_sessions: str = "start"
    """How the rule joins a live session that began without it (:data:`ON_LIVE_SESSIONS`)."""


def overlay_set(raw: Any, at: At, base: Path) -> tuple[str | None, tuple[Overlay, ...]]:
    """``smalltalk``, ``demand``, ``none`` (or absent) or a file relative to the policy."""
    if raw is None or raw == "none":
        return None, ()
    name = text(raw, at)
    path = SHIPPED_OVERLAYS.get(name, base / name)
    try:
        return name, tuple(load_overlays(path))
    except GovernorError as exc:
        raise at.error(f"{path}: {exc}") from None


def ltl_rules(raw: Any, at: At, vocabulary: Vocabulary) -> tuple[LTLRule, ...]:
    """A list of ``{name, text, formula, verified, on_live_sessions}`` over the declared
    propositions."""
    if not isinstance(raw, list):
        at.fail("a list of constraints", raw)
    rules: list[LTLRule] = []
    for i, entry in enumerate(raw):
        where = at.index(i)
        data = mapping(entry, where, LTL_RULE_KEYS, ("name", "formula"))
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
        joins = data.get("on_live_sessions", "start")
        if joins not in ON_LIVE_SESSIONS:
            where.key("on_live_sessions").fail(" or ".join(ON_LIVE_SESSIONS), joins)
        rules.append(LTLRule(name, sentence, formula, verified, joins))
    return tuple(rules)


def fallback_texts(
    raw: Any, at: At, defaults: Mapping[str, str] = DEFAULT_FALLBACKS, *, required: bool = True
) -> dict[str, str]:
    """The fallback texts over ``defaults`` (``default`` required unless ``required`` is off)."""
    if raw is None:
        return dict(defaults)
    data = mapping(raw, at, FALLBACK_KEYS, ("default",) if required else ())
    out = dict(defaults)
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
