"""The vocabulary of tool-call propositions: predicates over an action and the session so far.

A policy declares each proposition by name (an LTL atom) with one source:

- ``{tool: NAME}`` true when the action calls ``NAME`` (``"*"``: any tool), optionally only when
  every condition of ``where`` holds on that call's arguments: ``{path, equals}``,
  ``{path, not_equals}``, ``{path, matches: REGEX}`` (``re.search`` on at most
  :data:`MAX_MATCH_CHARS` characters) or ``{path, op, value}`` (``< <= > >= == !=``);
- ``{sum: {tool, path}, op, value}`` a running total over the session: true when the sum of the
  ``path`` argument of every ``tool`` call so far, this action's included, satisfies ``op value``.
  An amount that is not a finite number >= 0 makes it true at that step (fail closed) and is
  not added;
- ``{user: REGEX}`` true when the latest user message since the previous action matches.

Paths are dotted (``to.domain``; a number indexes a list). Labelling is a pure function of the
running sums so far, the conversation before the action and the action, so a check is a what-if;
the sums are advanced by the monitor's commit. Imports the error tree, the guard's exchange and
the spec's fields.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.guard.exchange import Message, Reply, ToolCall
from governor.guard.spec.fields import At, mapping, number, text

MAX_MATCH_CHARS = 4096
"""The most characters of a value a regex is run on."""
MAX_PATTERN_CHARS = 500
"""The longest regex a policy may declare."""
OPS: Mapping[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip
ANY_TOOL = "*"
PROPOSITION_KINDS = ("tool", "sum", "user")
"""A proposition's sources; each proposition has exactly one."""
PROPOSITION_KEYS = (*PROPOSITION_KINDS, "where", "op", "value")
SUM_KEYS = ("tool", "path")
CONDITION_KEYS = ("path", "equals", "not_equals", "matches", "op", "value")
MISSING = object()
"""What :func:`lookup` finds where a call's arguments have no value at the path."""


@dataclass(frozen=True)
class Condition:
    """One test of a call's argument at ``path``."""

    path: tuple[str, ...]
    kind: str  # equals, not_equals, matches, compare
    value: Any
    pattern: re.Pattern[str] | None = None

    def holds(self, args: Mapping[str, Any]) -> bool:
        found = lookup(args, self.path)
        if self.kind == "equals":
            return found is not MISSING and found == self.value
        if self.kind == "not_equals":
            return found is MISSING or found != self.value
        if found is MISSING:
            return False
        if self.kind == "matches":
            assert self.pattern is not None
            shown = found if isinstance(found, str) else json.dumps(found, sort_keys=True)
            return self.pattern.search(shown[:MAX_MATCH_CHARS]) is not None
        amount = as_number(found)
        return amount is not None and OPS[self.kind](amount, self.value)


@dataclass(frozen=True)
class ToolProp:
    """True when the action calls ``tool`` (any tool for ``*``) with every condition holding."""

    name: str
    tool: str
    where: tuple[Condition, ...] = ()

    def holds(self, call: ToolCall) -> bool:
        if self.tool != ANY_TOOL and call.name != self.tool:
            return False
        if not self.where:
            return True
        args = call.args()
        return all(c.holds(args) for c in self.where)


@dataclass(frozen=True)
class SumProp:
    """A running total of ``path`` over ``tool`` calls compared with ``value``."""

    name: str
    tool: str
    path: tuple[str, ...]
    op: str
    value: float


@dataclass(frozen=True)
class UserProp:
    """True when the latest user message since the previous action matches ``pattern``."""

    name: str
    pattern: re.Pattern[str]


Proposition = ToolProp | SumProp | UserProp


@dataclass(frozen=True)
class Vocabulary:
    """The declared propositions; :meth:`labels` is the labelling function."""

    props: tuple[Proposition, ...] = ()

    @property
    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.props)

    @functools.cached_property
    def reads_user(self) -> bool:
        """Whether a proposition reads the user's latest message (else it is not looked for)."""
        return any(isinstance(p, UserProp) for p in self.props)

    def restricted(self, names: frozenset[str]) -> Vocabulary:
        """Only the propositions named (what one formula reads)."""
        return Vocabulary(tuple(p for p in self.props if p.name in names))

    def labels(
        self, sums: Mapping[str, float], action: Reply, before: Sequence[Message]
    ) -> tuple[frozenset[str], dict[str, float]]:
        """The propositions true at the position of ``action`` after the messages ``before``,
        and the running sums after it (``sums`` is left as it was)."""
        out: set[str] = set()
        new = dict(sums)
        said = latest_user_text(before) if self.reads_user else None
        for p in self.props:
            if isinstance(p, UserProp):
                if said is not None and p.pattern.search(said[:MAX_MATCH_CHARS]):
                    out.add(p.name)
            elif isinstance(p, ToolProp):
                if any(p.holds(c) for c in action.tool_calls):
                    out.add(p.name)
            else:
                total, unknown = new.get(p.name, 0.0), False
                for c in action.tool_calls:
                    if c.name == p.tool:
                        amount = as_number(lookup(c.args(), p.path))
                        if amount is None or amount < 0:
                            unknown = True
                        else:
                            total += amount
                new[p.name] = total
                if unknown or OPS[p.op](total, p.value):
                    out.add(p.name)
        return frozenset(out), new


def latest_user_text(messages: Sequence[Message]) -> str | None:
    """The latest user message after the last assistant message (None when there is none)."""
    for m in reversed(messages):
        if m.role == "assistant":
            return None
        if m.role == "user":
            return m.content or ""
    return None


def lookup(args: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` inside ``args``; ``MISSING`` when there is none."""
    value = args
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def as_number(value: Any) -> float | None:
    """A finite number from a number or numeric text; None otherwise (bools are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


# --------------------------------------------------------------------------- reading a policy


def _path(value: Any, at: At) -> tuple[str, ...]:
    parts = tuple(text(value, at).split("."))
    if any(not p for p in parts):
        at.fail("a dotted path such as to.domain", value)
    return parts


def _regex(value: Any, at: At) -> re.Pattern[str]:
    source = text(value, at)
    if len(source) > MAX_PATTERN_CHARS:
        at.fail(f"a regex of at most {MAX_PATTERN_CHARS} characters", f"{len(source)} characters")
    try:
        return re.compile(source)
    except re.error as exc:
        raise at.error(f"expected a regular expression, found {source!r} ({exc})") from None


def _op(value: Any, at: At) -> str:
    if value not in OPS:
        at.fail(" or ".join(OPS), value)
    return str(value)


def condition_from(raw: Any, at: At) -> Condition:
    data = mapping(raw, at, CONDITION_KEYS, ("path",))
    path = _path(data["path"], at.key("path"))
    tests = [k for k in ("equals", "not_equals", "matches", "op") if k in data]
    if len(tests) != 1:
        at.fail("exactly one of equals, not_equals, matches or op (with value)", sorted(data))
    kind = tests[0]
    if kind == "matches":
        return Condition(path, "matches", None, _regex(data["matches"], at.key("matches")))
    if kind == "op":
        if "value" not in data:
            raise at.error("missing key value (the number op compares with)")
        return Condition(
            path, _op(data["op"], at.key("op")), number(data["value"], at.key("value"))
        )
    if "value" in data:
        raise at.error(f"unknown key value with {kind}; expected path and {kind}")
    return Condition(path, kind, data[kind])


def proposition_from(name: str, raw: Any, at: At) -> Proposition:
    """One declared proposition (see the module doc for the forms)."""
    data = mapping(raw, at, PROPOSITION_KEYS)
    given = [k for k in PROPOSITION_KINDS if k in data]
    if len(given) != 1:
        at.fail("exactly one of tool, sum or user", sorted(map(str, data)))
    kind = given[0]
    extra = sorted(set(data) - {kind} - ({"where"} if kind == "tool" else set())
                   - ({"op", "value"} if kind == "sum" else set()))  # fmt: skip
    if extra:
        raise at.error(f"unknown key(s) {', '.join(extra)} for a {kind} proposition")
    if kind == "user":
        return UserProp(name, _regex(data["user"], at.key("user")))
    if kind == "tool":
        where = data.get("where", [])
        where = [where] if isinstance(where, Mapping) else where
        if not isinstance(where, list):
            at.key("where").fail("a condition or a list of conditions", where)
        conds = tuple(condition_from(c, at.key("where").index(i)) for i, c in enumerate(where))
        return ToolProp(name, text(data["tool"], at.key("tool")), conds)
    spec = mapping(data["sum"], at.key("sum"), SUM_KEYS, SUM_KEYS)
    for key in ("op", "value"):
        if key not in data:
            raise at.error(f"missing key {key} (a sum proposition compares the total)")
    return SumProp(
        name,
        text(spec["tool"], at.key("sum").key("tool")),
        _path(spec["path"], at.key("sum").key("path")),
        _op(data["op"], at.key("op")),
        number(data["value"], at.key("value")),
    )
