"""Validating a policy's supervision section by building it, part by part.

:func:`validate` builds each part of a :class:`~.supervision_spec.SupervisionSpec` with the
supervision package's own constructors (modes, the mode graph, the gate, the selector, the mode
rules, the overrides, the whole supervisor) over placeholder observers, in order of dependence, so
that the first error names the path of the part that failed (``supervision.rules[2]``). Selection
choices are also checked against the features the classifiers provide, which the selector itself
does not check. Imports the core types, the error tree, the observer, the supervision package and
the guard's policy schema helpers and supervision spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from governor.core import Candidate, Feedback, Policy, Trajectory
from governor.errors import ConfigError
from governor.guard.policy_schema import At
from governor.guard.supervision_spec import SupervisionSpec
from governor.observer import Observer
from governor.supervision import ConditionSelector, Mode, TimeWindowClassifier

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
