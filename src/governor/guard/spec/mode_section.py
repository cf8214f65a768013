"""Reading a policy file's ``supervision:`` section::

    supervision:
      modes:        {NAME: {description, system_prompt, overlays, fallbacks, ltl, silent}}
      initial:      NAME                    (default: the first mode)
      entries:      [NAME]                  (modes an interaction may start in; default: initial)
      graph:        {NAME: [NAME]}          (which mode may follow which; staying is allowed)
      safe_mode:    NAME                    (executed when no ranked mode is admissible)
      propositions: {name: "feature op number"}
      rules:        [{name, text, formula}] (LTL over mode_<NAME> and the propositions)
      select:       [{when: "feature op number", mode: NAME}]
      default_mode: NAME                    (default: initial)
      max_steps:    {NAME: steps}
      gating:       [{name, when, sustain}]
      overrides:    [{kind: threshold | escalating_affect | perseveration, name, mode, action, ...}]
      limits:       {max_refusals, cooldown_steps, window, text_chars}
      time_window:  {start, end}            (hours; the time_window classifier's window)
      crisis_phrases: [regex]               (default: the shipped list)
      refusal_phrases: [regex]              (user turns counted as refusals)

A mode's ``overlays`` is ``smalltalk``, ``demand``, ``none`` or a file (absent: the policy's);
its ``fallbacks`` default to the policy's; its ``ltl`` rules are over the policy's propositions
and judge only that mode's replies. The classifiers are those ``checks.user`` names. Every part
is then built with the supervision package's constructors (:func:`validate`), so their
validation (an unreachable or dead-end mode, an unknown feature, an unknown mode) reports the
path of the part that failed. :func:`validate` builds each part of the
:class:`~.mode_spec.SupervisionSpec` over placeholder observers, in order of dependence (modes,
the mode graph, the gate, the selector, the mode rules, the overrides, the whole supervisor), so
that the first error names the path of the part that failed (``supervision.rules[2]``); selection
choices are also checked against the features the classifiers provide, which the selector itself
does not check. Imports the config, the core types, the error tree, the observer, the overlay
rules, the supervision package and the spec's parts, fields, mode spec and propositions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from governor.config import from_mapping
from governor.core import Candidate, Feedback, Policy, Trajectory
from governor.errors import ConfigError
from governor.guard.spec.fields import At, boolean, mapping, names, number, optional_text, text
from governor.guard.spec.mode_spec import (
    CLASSIFIERS,
    DEFAULT_CLASSIFIERS,
    OVERRIDE_KINDS,
    REFUSAL_PHRASES,
    ModeSpec,
    OverrideSpec,
    SupervisionSpec,
)
from governor.guard.spec.parts import fallback_texts, ltl_rules, overlay_set
from governor.guard.spec.propositions import Vocabulary
from governor.observer import Observer
from governor.overlays.rules import Overlay
from governor.supervision import (
    ConditionSelector,
    GatingRule,
    Mode,
    SupervisorConfig,
    TimeWindowClassifier,
)

KEYS = ("modes", "initial", "entries", "graph", "safe_mode", "propositions", "rules", "select",
        "default_mode", "max_steps", "gating", "overrides", "limits", "time_window",
        "crisis_phrases", "refusal_phrases")  # fmt: skip
MODE_KEYS = ("description", "system_prompt", "overlays", "fallbacks", "ltl", "silent")
TIME_WINDOW_KEYS = ("start", "end")
RULE_KEYS = ("name", "text", "formula")
SELECT_KEYS = ("when", "mode")
GATING_KEYS = ("name", "when", "sustain")
OVERRIDE_KEYS = ("kind", "name", "mode", "action")
"""The keys every override has; its kind adds those of :data:`OVERRIDE_PARAMS`."""
LIMITS_KEYS = tuple(SupervisorConfig.__dataclass_fields__)
OVERRIDE_PARAMS = {
    "threshold": ("when",),
    "escalating_affect": ("feature", "window", "drop", "below"),
    "perseveration": ("repeats", "similarity"),
}


def supervision_from(
    raw: Any,
    at: At,
    *,
    vocabulary: Vocabulary,
    overlays: tuple[str | None, tuple[Overlay, ...]],
    fallbacks: Mapping[str, str],
    base: Path,
    classifiers: Sequence[str] | None,
) -> SupervisionSpec:
    """The supervision section ``raw`` read at ``at``, validated by building it."""
    data = mapping(raw, at, KEYS, ("modes",))
    modes = _modes(data["modes"], at.key("modes"), vocabulary, overlays, fallbacks, base)
    names_ = [m.name for m in modes]
    window = None
    if "time_window" in data:
        tw = mapping(data["time_window"], at.key("time_window"), TIME_WINDOW_KEYS, TIME_WINDOW_KEYS)
        window = (number(tw["start"], at.key("time_window.start")),
                  number(tw["end"], at.key("time_window.end")))  # fmt: skip
    used = tuple(classifiers) if classifiers is not None else (
        DEFAULT_CLASSIFIERS + (("time_window",) if window else ()))  # fmt: skip
    if "time_window" in used and window is None:
        at.key("time_window").fail("{start, end} (checks.user names time_window)", None)
    spec = SupervisionSpec(
        modes=modes,
        edges=_edges(data.get("graph") or {}, at.key("graph")),
        initial=text(data.get("initial", names_[0]), at.key("initial")),
        entries=names(data["entries"], at.key("entries")) if "entries" in data else None,
        safe_mode=optional_text(data.get("safe_mode"), at.key("safe_mode")),
        propositions=_conditions(data.get("propositions") or {}, at.key("propositions")),
        rules=_rules(data.get("rules") or [], at.key("rules")),
        choices=_choices(data.get("select") or [], at.key("select")),
        default_mode=optional_text(data.get("default_mode"), at.key("default_mode")),
        max_steps=_steps(data.get("max_steps") or {}, at.key("max_steps")),
        gating=_gating(data.get("gating") or [], at.key("gating")),
        overrides=_overrides(data.get("overrides") or [], at.key("overrides")),
        config=_limits(data.get("limits") or {}, at.key("limits")),
        classifiers=used,
        time_window=window,
        crisis_phrases=_patterns(data.get("crisis_phrases"), at.key("crisis_phrases")),
        refusal_phrases=_patterns(data.get("refusal_phrases"), at.key("refusal_phrases"))
        or REFUSAL_PHRASES,
    )  # fmt: skip
    validate(spec, at)
    return spec


def _modes(
    raw: Any,
    at: At,
    vocabulary: Vocabulary,
    overlays: tuple[str | None, tuple[Overlay, ...]],
    fallbacks: Mapping[str, str],
    base: Path,
) -> tuple[ModeSpec, ...]:
    if not isinstance(raw, Mapping) or not raw:
        at.fail("a mapping of mode names to modes", raw)
    out: list[ModeSpec] = []
    for name, entry in raw.items():
        where = at.key(str(name))
        data = mapping(entry or {}, where, MODE_KEYS)
        source, sets = overlays
        if "overlays" in data:
            source, sets = overlay_set(data["overlays"], where.key("overlays"), base)
        out.append(ModeSpec(
            name=str(name),
            description=text(data.get("description", ""), where.key("description"), empty=True),
            system_prompt=optional_text(data.get("system_prompt"), where.key("system_prompt")),
            overlays_from=source,
            overlays=sets,
            fallbacks=fallback_texts(data.get("fallbacks"), where.key("fallbacks"), fallbacks,
                                     required=False),
            ltl=ltl_rules(data.get("ltl") or [], where.key("ltl"), vocabulary),
            silent=boolean(data.get("silent", False), where.key("silent")),
        ))  # fmt: skip
    return tuple(out)


def _edges(raw: Any, at: At) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, Mapping):
        at.fail("a mapping of each mode to the modes that may follow it", raw)
    return {str(k): names(v or [], at.key(str(k))) for k, v in raw.items()}


def _conditions(raw: Any, at: At) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        at.fail("a mapping of proposition names to 'feature op number'", raw)
    return {str(k): text(v, at.key(str(k))) for k, v in raw.items()}


def _rules(raw: Any, at: At) -> tuple[tuple[str, str, str], ...]:
    out: list[tuple[str, str, str]] = []
    for i, entry in enumerate(_list(raw, at)):
        where = at.index(i)
        data = mapping(entry, where, RULE_KEYS, ("name", "formula"))
        name = text(data["name"], where.key("name"))
        if any(r[0] == name for r in out):
            where.key("name").fail("a name no other mode rule has", name)
        formula = text(data["formula"], where.key("formula"))
        out.append((name, text(data.get("text", name), where.key("text")), formula))
    return tuple(out)


def _choices(raw: Any, at: At) -> tuple[tuple[str, str], ...]:
    out = []
    for i, entry in enumerate(_list(raw, at)):
        data = mapping(entry, at.index(i), SELECT_KEYS, SELECT_KEYS)
        out.append((text(data["when"], at.index(i).key("when")),
                    text(data["mode"], at.index(i).key("mode"))))  # fmt: skip
    return tuple(out)


def _steps(raw: Any, at: At) -> dict[str, int]:
    if not isinstance(raw, Mapping):
        at.fail("a mapping of mode names to step counts", raw)
    out = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            at.key(str(k)).fail("an integer >= 1", v)
        out[str(k)] = v
    return out


def _gating(raw: Any, at: At) -> tuple[GatingRule, ...]:
    out = []
    for i, entry in enumerate(_list(raw, at)):
        where = at.index(i)
        data = mapping(entry, where, GATING_KEYS, ("name", "when"))
        out.append(GatingRule(text(data["name"], where.key("name")),
                              text(data["when"], where.key("when")),
                              boolean(data.get("sustain", False), where.key("sustain"))))  # fmt: skip
    return tuple(out)


def _overrides(raw: Any, at: At) -> tuple[OverrideSpec, ...]:
    out = []
    for i, entry in enumerate(_list(raw, at)):
        where = at.index(i)
        if not isinstance(entry, Mapping) or entry.get("kind") not in OVERRIDE_KINDS:
            found = entry.get("kind") if isinstance(entry, Mapping) else entry
            where.key("kind").fail(" or ".join(OVERRIDE_KINDS), found)
        kind = str(entry["kind"])
        own = OVERRIDE_PARAMS[kind]
        data = mapping(entry, where, (*OVERRIDE_KEYS, *OVERRIDE_PARAMS[kind]),
                       ("name", "when") if kind == "threshold" else ())  # fmt: skip
        params: dict[str, Any] = {}
        for key in own:
            if key in data and key != "when":
                value = data[key]
                params[key] = text(value, where.key(key)) if key == "feature" else number(
                    value, where.key(key))  # fmt: skip
        default_action = "interrupt" if kind == "perseveration" else "force_mode"
        out.append(OverrideSpec(
            kind=kind,
            name=text(data.get("name", kind), where.key("name")),
            mode=optional_text(data.get("mode"), where.key("mode")),
            action=text(data.get("action", default_action), where.key("action")),
            when=optional_text(data.get("when"), where.key("when")),
            params=params,
        ))  # fmt: skip
        at_place(where, out[-1].build)
    return tuple(out)


def _patterns(raw: Any, at: At) -> tuple[str, ...] | None:
    if raw is None:
        return None
    out = names(raw, at)
    for i, pattern in enumerate(out):
        try:
            re.compile(pattern)
        except re.error as exc:
            at.index(i).fail(f"a regular expression ({exc})", pattern)
    return out


def _limits(raw: Any, at: At) -> SupervisorConfig:
    data = mapping(raw, at, LIMITS_KEYS)
    return from_mapping(SupervisorConfig, dict(data), str(at))


def _list(raw: Any, at: At) -> list[Any]:
    if not isinstance(raw, list):
        at.fail("a list", raw)
    return raw


def classifier_names(raw: Any, at: At) -> tuple[str, ...]:
    """``checks.user`` of a supervised policy: the shipped classifiers to run on user input."""
    chosen = names(raw or [], at)
    for i, name in enumerate(chosen):
        if name not in CLASSIFIERS:
            at.index(i).fail(f"one of {', '.join(CLASSIFIERS)}", name)
    return chosen


T = TypeVar("T")


class _Placeholder(Policy):
    """Stands in for a mode's upstream while the section is validated; never asked."""

    name = "placeholder"

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        raise ConfigError("placeholder policy: expected to be replaced before use")


def at_place(where: At, build: Callable[[], T]) -> T:
    """``build()``, its ConfigError prefixed with ``where``."""
    try:
        return build()
    except ConfigError as exc:
        raise where.error(str(exc)) from None


def validate(spec: SupervisionSpec, at: At) -> None:
    """Build each part with the supervision package's constructors, in order of dependence."""
    held = {m.name: Observer(_Placeholder()) for m in spec.modes}
    for m in spec.modes:
        at_place(at.key("modes").key(m.name), partial(Mode, m.name, held[m.name]))
    graph = at_place(at.key("graph"), partial(spec.graph, held))
    if spec.time_window is not None:  # checked even when no classifier reads it
        at_place(at.key("time_window"), partial(TimeWindowClassifier, *spec.time_window))
    features = at_place(at.key("time_window"), partial(spec.gate, ())).features
    for i, rule in enumerate(spec.gating):
        at_place(at.key("gating").index(i), partial(spec.gate, [rule]))
    for i, choice in enumerate(spec.choices):
        where = at.key("select").index(i)
        selector = at_place(where, partial(ConditionSelector, graph.names, [choice], graph.initial))
        for feature in selector.features:
            if feature not in features:
                raise where.error(
                    f"unknown feature {feature!r}; expected one the classifiers provide:"
                    f" {', '.join(sorted(features)) or 'none'}"
                )
    at_place(
        at.key("default_mode"), partial(replace(spec, choices=(), max_steps={}).selector, graph)
    )
    at_place(at.key("max_steps"), partial(spec.selector, graph))
    bare = replace(spec, rules=(), overrides=(), safe_mode=None)
    at_place(at.key("propositions"), partial(bare.supervisor, held))
    for i, r in enumerate(spec.rules):
        at_place(at.key("rules").index(i), partial(replace(bare, rules=(r,)).supervisor, held))
    for i, o in enumerate(spec.overrides):
        at_place(
            at.key("overrides").index(i), partial(replace(bare, overrides=(o,)).supervisor, held)
        )
    at_place(at.key("safe_mode"), partial(replace(bare, safe_mode=spec.safe_mode).supervisor, held))
    at_place(at, partial(spec.supervisor, held))
