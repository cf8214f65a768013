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
- ``{user: REGEX}`` true when the latest user message since the previous action matches;
- ``{result: NAME, where: [...]}`` true when a result of a ``NAME`` call arrived since the
  previous action and every condition holds on it (its JSON, or its text when it is not JSON; a
  condition without ``path`` reads the whole result): "refund only after a verify_identity that
  succeeded" is ``G(refund -> O verified)``. Calls of one reply form one step, so a sibling's
  result is never known to the calls beside it;
- ``{seen: untrusted}`` true once the session has seen a result of an untrusted tool.

A ``where`` condition may also test where an argument's value came from (:mod:`..provenance`):
``{path, from: [SOURCES]}`` true when every value at ``path`` appeared before in one of the
sources, ``{path, not_from: [SOURCES]}`` true when a value there appeared in none (both false
when the argument is absent or null), and
``{path, links_not_from: [SOURCES]}`` true when a link inside the value's text (a web or email
address) did not appear in any of the sources. Sources are
``user``, ``system``, ``tool``, ``tool:NAME``, ``tool:NAME.FIELD``, ``group:NAME``, ``trusted``, ``untrusted`` and
``nowhere`` (made up). A tool name in ``tool`` or ``result`` may be ``group:NAME``, a group of
the policy's ``tools.groups``; tools not in ``tools.trusted`` are untrusted.

Paths are dotted (``to.domain``; a number indexes a list). Labelling is a pure function of the
running sums and the provenance index so far, the conversation before the action and the action,
so a check is a what-if; sums and index are advanced by the monitor's commit. Imports the error
tree, the guard's exchange and provenance index, and the spec's fields.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governor.files import json_loads
from governor.guard.exchange import History, Message, Reply, ToolCall
from governor.guard.provenance import NOWHERE, SOURCES, Seen, Sources
from governor.guard.spec.fields import At, mapping, names, number, text

MAX_MATCH_CHARS = 4096
"""The most characters of a value a regex is run on."""
MAX_PATTERN_CHARS = 500
"""The longest regex a policy may declare."""
OPS: Mapping[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip
ANY_TOOL = "*"
GROUP_PREFIX = "group:"
PROPOSITION_KINDS = ("tool", "sum", "user", "result", "seen")
"""A proposition's sources; each proposition has exactly one."""
PROPOSITION_KEYS = (*PROPOSITION_KINDS, "where", "op", "value")
SUM_KEYS = ("tool", "path")
CONDITION_KEYS = ("path", "equals", "not_equals", "matches", "op", "value", "from", "not_from",
                  "links_not_from")  # fmt: skip
TESTS = ("equals", "not_equals", "matches", "op", "from", "not_from", "links_not_from")
PROVENANCE_TESTS = ("from", "not_from", "links_not_from")
SEEN_VALUES = ("untrusted",)
MAX_RESULT_CHARS = 262_144
"""The most characters of a tool result read as JSON (a longer one is read as text)."""
MISSING = object()
"""What :func:`lookup` finds where a call's arguments have no value at the path."""


@dataclass(frozen=True)
class Condition:
    """One test of a call's argument at ``path``."""

    path: tuple[str, ...]
    kind: str  # equals, not_equals, matches, from, not_from or an op
    value: Any
    pattern: re.Pattern[str] | None = None

    def holds(self, args: Any, context: Provenance | None = None, raw: str | None = None) -> bool:
        found = lookup(args, self.path)
        if self.kind == "links_not_from":
            return (
                found is not MISSING
                and context is not None
                and not context[0].links_found_in(context[1], found, self.value)
            )
        if self.kind in ("from", "not_from"):
            if found is MISSING or found is None:  # no value: nothing came from anywhere
                return False
            inside = context is not None and context[0].found_in(context[1], found, self.value)
            return inside if self.kind == "from" else not inside
        if self.kind == "equals":
            return found is not MISSING and found == self.value
        if self.kind == "not_equals":
            return found is MISSING or found != self.value
        if found is MISSING:
            return False
        if self.kind == "matches":
            assert self.pattern is not None
            shown = found if isinstance(found, str) else json.dumps(found, sort_keys=True)
            if raw is not None and not self.path:
                shown = raw
            return self.pattern.search(shown[:MAX_MATCH_CHARS]) is not None
        amount = as_number(found)
        return amount is not None and OPS[self.kind](amount, self.value)


Provenance = tuple[Sources, Seen]
"""What a ``from`` condition reads: the index's settings and the index."""


@dataclass(frozen=True)
class ToolProp:
    """True when the action calls ``tool`` (any tool for ``*``; a member of the group for
    ``group:NAME``) with every condition holding."""

    name: str
    tool: str
    where: tuple[Condition, ...] = ()
    members: frozenset[str] | None = None
    """The tools named: None for any tool."""

    def calls(self, name: str) -> bool:
        return self.members is None or name in self.members

    def holds(self, call: ToolCall, context: Provenance | None = None) -> bool:
        if not self.calls(call.name):
            return False
        if not self.where:
            return True
        args = call.args()
        return all(c.holds(args, context) for c in self.where)


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


@dataclass(frozen=True)
class ResultProp:
    """True when a result of a ``tool`` call (see :class:`ToolProp`) arrived since the previous
    action and every condition holds on it."""

    name: str
    tool: str
    where: tuple[Condition, ...] = ()
    members: frozenset[str] | None = None

    def holds(self, name: str | None, content: str) -> bool:
        if name is None or (self.members is not None and name not in self.members):
            return False
        value: Any = content
        if len(content) <= MAX_RESULT_CHARS:
            try:
                value = json_loads(content)
            except ValueError:
                value = content
        return all(c.holds(value, None, content) for c in self.where)


@dataclass(frozen=True)
class SeenProp:
    """True once the session has seen a result of an untrusted tool."""

    name: str
    seen: str = "untrusted"


Proposition = ToolProp | SumProp | UserProp | ResultProp | SeenProp


PLAIN_MEMO_LIMIT = 64
"""Actions whose plain labels a vocabulary keeps (emptied when full): the candidates of the
steps in flight, each judged by every rule."""


def is_plain(p: Proposition) -> bool:
    """Whether ``p`` reads only the action and the messages before it (not the running sums nor
    the provenance index)."""
    if isinstance(p, ToolProp):
        return not any(c.kind in PROVENANCE_TESTS for c in p.where)
    return isinstance(p, (UserProp, ResultProp))


@dataclass(frozen=True)
class Vocabulary:
    """The declared propositions, the tool groups and the trusted tools; :meth:`labels` is the
    labelling function.

    The plain propositions (:func:`is_plain`) of an action after a conversation are the same for
    every rule: a vocabulary :meth:`restricted` to a rule's atoms reads them from the one it was
    restricted from (``whole``), which evaluates all of its own once per action and conversation
    and keeps them (by identity: each entry holds the action and the messages, both immutable)."""

    props: tuple[Proposition, ...] = ()
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)
    trusted: frozenset[str] = frozenset()
    whole: Vocabulary | None = field(default=None, compare=False, repr=False)
    """The vocabulary this one was restricted from (None: none)."""
    _memo: dict[tuple[int, int], tuple[Any, Any, frozenset[str] | None]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """The plain labels of recent actions, by the ids of the action and of the messages
    before it (None: a proposition raised on it)."""
    _narrowed: dict[frozenset[str], frozenset[str]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """The plain labels of recent actions as this vocabulary's own (what :meth:`labels` gives a
    vocabulary of plain propositions only), by the labels of the whole: each the same object
    for every action labelled alike, its hash computed once."""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.props)

    @functools.cached_property
    def reads_user(self) -> bool:
        """Whether a proposition reads the user's latest message (else it is not looked for)."""
        return any(isinstance(p, UserProp) for p in self.props)

    @functools.cached_property
    def _plain(self) -> tuple[tuple[Proposition, ...], frozenset[str], tuple[Proposition, ...]]:
        """The plain propositions, their names, and the others (in declared order)."""
        plain = tuple(p for p in self.props if is_plain(p))
        others = tuple(p for p in self.props if not is_plain(p))
        return plain, frozenset(p.name for p in plain), others

    def restricted(self, names: frozenset[str]) -> Vocabulary:
        """Only the propositions named (what one formula reads)."""
        props = tuple(p for p in self.props if p.name in names)
        return Vocabulary(props, self.groups, self.trusted, self.whole or self)

    @functools.cached_property
    def text_labels_read_sums_only(self) -> bool:
        """Whether the labels of a reply without tool calls are a function of the running sums
        alone (no proposition reads the user, a result or the provenance index)."""
        return self.sources is None and all(isinstance(p, (ToolProp, SumProp)) for p in self.props)

    @functools.cached_property
    def sources(self) -> Sources | None:
        """What the provenance index must record for these propositions (None: no index)."""
        tags: set[str] = set()
        seen = False
        for p in self.props:
            seen = seen or isinstance(p, SeenProp)
            for c in p.where if isinstance(p, ToolProp) else ():
                if c.kind in PROVENANCE_TESTS:
                    tags.update(c.value)
        if NOWHERE in tags:
            tags |= {"user", "system", "tool"}
        if not tags and not seen:
            return None
        return Sources(frozenset(tags - {NOWHERE}), self.groups, self.trusted)

    def labels(
        self,
        sums: Mapping[str, float],
        action: Reply,
        before: Sequence[Message],
        seen: Seen | None = None,
        *,
        kept: bool = True,
    ) -> tuple[frozenset[str], Mapping[str, float], Seen | None]:
        """The propositions true at the position of ``action`` after the messages ``before``,
        the running sums and the provenance index after it (``sums`` and ``seen`` are left as
        they were, and are what is given back when no proposition adds to them: no one changes
        either; ``seen`` None: start an index when these propositions read one). Without
        ``kept`` (an action and messages no other rule reads), the plain labels are not read
        from, nor kept in, the vocabulary this one was restricted from."""
        _, names, others = self._plain
        whole = self.whole if kept else None
        shared = None if whole is None else whole.plain_labels(action, before)
        if shared is None:
            return self._evaluated(self.props, set(), sums, action, before, seen)
        if not others:  # (no sums, no index: both as they were)
            narrowed = self._narrowed
            own = narrowed.get(shared)
            if own is None:
                if len(narrowed) >= PLAIN_MEMO_LIMIT:
                    narrowed.clear()
                own = narrowed[shared] = shared & names
            return own, sums, seen
        return self._evaluated(others, set(shared & names), sums, action, before, seen)

    def plain_labels(self, action: Reply, before: Sequence[Message]) -> frozenset[str] | None:
        """The plain propositions (:func:`is_plain`) true at the position of ``action`` after
        ``before``, kept for the next rule that asks; None when they cannot be kept (an action
        or messages that could change) or when a proposition raised on them (each rule then
        evaluates its own, and raises as it would alone)."""
        key = (id(action), id(before))
        hit = self._memo.get(key)
        if hit is not None and hit[0] is action and hit[1] is before:
            return hit[2]
        if type(action) is not Reply or type(action.tool_calls) is not tuple:
            return None
        if type(before) is not tuple and type(before) is not History:
            return None
        try:
            found: frozenset[str] | None = self._evaluated(
                self._plain[0], set(), {}, action, before, None, indexed=False
            )[0]
        except Exception:
            found = None
        if len(self._memo) >= PLAIN_MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = (action, before, found)
        return found

    def _evaluated(
        self,
        props: Sequence[Proposition],
        out: set[str],
        sums: Mapping[str, float],
        action: Reply,
        before: Sequence[Message],
        seen: Seen | None,
        indexed: bool = True,
    ) -> tuple[frozenset[str], dict[str, float], Seen | None]:
        """:meth:`labels` with ``props`` evaluated (in order) and added to ``out``; without
        ``indexed``, no provenance index is read (``props`` are plain)."""
        new = dict(sums)
        said = latest_user_text(before) if self.reads_user else None
        sources = self.sources if indexed else None
        context: Provenance | None = None
        if sources is not None:
            seen = sources.extended(seen or Seen(), before)
            context = (sources, seen)
        results: list[tuple[str | None, str]] | None = None
        calls = action.tool_calls
        called: frozenset[str] | None = None  # the names of the tools called
        for p in props:
            if isinstance(p, ToolProp):
                if p.where:
                    if any(p.holds(c, context) for c in calls):
                        out.add(p.name)
                else:  # a call of any tool, or of one of its own
                    called = frozenset(c.name for c in calls) if called is None else called
                    if called if p.members is None else not p.members.isdisjoint(called):
                        out.add(p.name)
            elif isinstance(p, UserProp):
                if said is not None and p.pattern.search(said[:MAX_MATCH_CHARS]):
                    out.add(p.name)
            elif isinstance(p, ResultProp):
                results = latest_results(before) if results is None else results
                if any(p.holds(tool, content) for tool, content in results):
                    out.add(p.name)
            elif isinstance(p, SeenProp):
                if context is not None and context[1].untrusted:
                    out.add(p.name)
            else:
                total, unknown = new.get(p.name, 0.0), False
                for c in calls:
                    if c.name == p.tool:
                        amount = as_number(lookup(c.args(), p.path))
                        if amount is None or amount < 0:
                            unknown = True
                        else:
                            total += amount
                new[p.name] = total
                if unknown or OPS[p.op](total, p.value):
                    out.add(p.name)
        return frozenset(out), new, seen


def latest_results(messages: Sequence[Message]) -> list[tuple[str | None, str]]:
    """The tool results after the last assistant message, each with its call's tool name (None
    when no call of that message has its id)."""
    found: list[Message] = []
    calls: dict[str, str] = {}
    for m in reversed(messages):
        if m.role == "assistant":
            calls = {c.id: c.name for c in m.tool_calls}
            break
        if m.role == "tool":
            found.append(m)
    return [(calls.get(m.tool_call_id or ""), m.content or "") for m in reversed(found)]


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


def _sources(value: Any, at: At, groups: Mapping[str, frozenset[str]]) -> tuple[str, ...]:
    given = names(value, at)
    if not given:
        at.fail("a non-empty list of sources", value)
    for i, source in enumerate(given):
        kind, sep, name = source.partition(":")
        ok = (
            (source in SOURCES or source == NOWHERE)
            if not sep
            else ((kind == "tool" and bool(name)) or (kind == "group" and name in groups))
        )
        if not ok:
            wanted = f"one of {', '.join((*SOURCES, NOWHERE))}, tool:NAME[.FIELD] or group:NAME"
            declared = ", ".join(sorted(groups)) or "none"
            at.index(i).fail(f"{wanted} (groups declared: {declared})", source)
    return given


def condition_from(
    raw: Any, at: At, groups: Mapping[str, frozenset[str]] | None = None
) -> Condition:
    data = mapping(raw, at, CONDITION_KEYS)
    path = _path(data["path"], at.key("path")) if "path" in data else ()
    tests = [k for k in TESTS if k in data]
    if len(tests) != 1:
        at.fail("exactly one of equals, not_equals, matches, op (with value), from or not_from",
                sorted(data))  # fmt: skip
    kind = tests[0]
    if kind in PROVENANCE_TESTS:
        if "value" in data:
            raise at.error(f"unknown key value with {kind}; expected path and {kind}")
        return Condition(path, kind, _sources(data[kind], at.key(kind), groups or {}))
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


def _members(tool: str, at: At, groups: Mapping[str, frozenset[str]]) -> frozenset[str] | None:
    """The tools a ``tool`` (or ``result``) value names: None for any tool."""
    if tool == ANY_TOOL:
        return None
    if tool.startswith(GROUP_PREFIX):
        group = tool[len(GROUP_PREFIX) :]
        if group not in groups:
            declared = ", ".join(sorted(groups)) or "none"
            at.fail(f"a tool name or group:NAME of a declared group ({declared})", tool)
        return groups[group]
    return frozenset({tool})


def proposition_from(
    name: str, raw: Any, at: At, groups: Mapping[str, frozenset[str]] | None = None
) -> Proposition:
    """One declared proposition (see the module doc for the forms); ``groups`` are the policy's
    tool groups."""
    groups = groups or {}
    data = mapping(raw, at, PROPOSITION_KEYS)
    given = [k for k in PROPOSITION_KINDS if k in data]
    if len(given) != 1:
        at.fail("exactly one of tool, sum, user, result or seen", sorted(map(str, data)))
    kind = given[0]
    extra = sorted(set(data) - {kind} - ({"where"} if kind in ("tool", "result") else set())
                   - ({"op", "value"} if kind == "sum" else set()))  # fmt: skip
    if extra:
        raise at.error(f"unknown key(s) {', '.join(extra)} for a {kind} proposition")
    if kind == "user":
        return UserProp(name, _regex(data["user"], at.key("user")))
    if kind == "seen":
        if data["seen"] not in SEEN_VALUES:
            at.key("seen").fail(" or ".join(SEEN_VALUES), data["seen"])
        return SeenProp(name, str(data["seen"]))
    if kind in ("tool", "result"):
        where = data.get("where", [])
        where = [where] if isinstance(where, Mapping) else where
        if not isinstance(where, list):
            at.key("where").fail("a condition or a list of conditions", where)
        conds = tuple(
            condition_from(c, at.key("where").index(i), groups) for i, c in enumerate(where)
        )
        tool = text(data[kind], at.key(kind))
        members = _members(tool, at.key(kind), groups)
        if kind == "result":
            if any(c.kind in PROVENANCE_TESTS for c in conds):
                raise at.key("where").error("from and not_from test a tool call's arguments,"
                                            " not a result")  # fmt: skip
            return ResultProp(name, tool, conds, members)
        return ToolProp(name, tool, conds, members)
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
