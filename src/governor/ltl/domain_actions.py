"""The actions of a domain file, compiled into an :class:`governor.ltl.actions.ActionDomain` for the
domain-aware joint check (``governor ltl conflicts --domain-file``).

The keys, next to those of :mod:`governor.ltl.english.domain_file`::

    init: [agent_at(dock)]          # the propositions true at the start (the others are false)
    moves: true                     # a go_<place> action for each place of ``places``
    actions:
      - name: pick_pallet           # what a witness step shows
        pre: [agent_at(shelf), "!is_grabbed(crate)"]   # literals: p must hold, !p must not
        add: [is_grabbed(pallet)]   # effects: del first, then add
        del: []
        when:                       # optional conditional effects, read before the step
          - {if: [agent_at(loading_bay)], add: [is_in(pallet, truck)], del: []}
    invariants:                     # optional: between least and most of facts hold in every state
      - {facts: [is_grabbed(pallet), is_grabbed(crate)], most: 1, text: one thing held}

Every literal names a proposition of the file (or a place's ``agent_at``). The places keep their
rule: exactly one holds in every state (an invariant), so ``init`` names exactly one of them.

World-free: imports the error tree, the LTL parser, domain and action domains.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from governor.errors import ConfigError, SpecError, expected
from governor.ltl.actions import Action, ActionDomain, Invariant, When, facts
from governor.ltl.domain import Domain, proposition_args
from governor.ltl.parser import atom

FIELDS = ("init", "moves", "actions", "invariants")
"""The domain file's keys that describe its actions."""
ACTION_KEYS = ("name", "pre", "add", "del", "when")
WHEN_KEYS = ("if", "add", "del")
INVARIANT_KEYS = ("facts", "least", "most", "text")
MAX_ACTIONS = 2000
"""Most actions (with the generated moves) one file may declare."""

Literals = tuple[frozenset[str], frozenset[str]]


def compile_actions(data: Mapping[str, Any], domain: Domain, where: str) -> ActionDomain | None:
    """The action domain of a domain file's ``data`` (None when it has none of :data:`FIELDS`);
    ``where`` (the file) prefixes every error."""
    if not any(data.get(k) is not None for k in FIELDS):
        return None
    moves = data.get("moves", False)
    if not isinstance(moves, bool):
        raise ConfigError(f"{where}: moves: {expected('true or false', moves)}")
    init = _names(data.get("init"), domain, f"{where}: init")
    acts = [
        _action(a, domain, f"{where}: actions[{i}]")
        for i, a in enumerate(_list(data, "actions", where))
    ]
    if moves:
        acts += [_move(room, domain.rooms) for room in domain.rooms]
    names = [a.name for a in acts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{where}: actions: {expected('distinct action names', twice)}")
    if len(acts) > MAX_ACTIONS:
        raise ConfigError(f"{where}: actions: {expected(f'at most {MAX_ACTIONS}', len(acts))}")
    invariants = [
        _invariant(x, domain, f"{where}: invariants[{i}]")
        for i, x in enumerate(_list(data, "invariants", where))
    ]
    if domain.rooms:
        invariants.insert(0, Invariant(frozenset(domain.rooms), 1, 1, "one place at a time"))
        here = sorted(init & set(domain.rooms))
        if len(here) != 1:
            what = f"exactly one place ({', '.join(domain.rooms)})"
            raise ConfigError(f"{where}: init: {expected(what, here)}")
    try:
        return ActionDomain(domain.name, init, tuple(acts), tuple(invariants))
    except SpecError as exc:
        raise ConfigError(f"{where}: init: {exc}") from None


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: {key}: {expected('a list', value)}")
    return value


def _mapping(value: object, keys: tuple[str, ...], where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: {expected('a mapping with the keys ' + ', '.join(keys), value)}"
        )
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise ConfigError(f"{where}: {expected('only the keys ' + ', '.join(keys), unknown)}")
    return value


def _label(text: object, domain: Domain, where: str) -> str:
    """The proposition ``text`` names; an error unless it is one of the domain's."""
    what = "a proposition of the domain (a name, or a name with arguments such as is_open(door))"
    if not isinstance(text, str):
        raise ConfigError(f"{where}: {expected(what, text)}")
    try:
        label = atom(text).label
    except SpecError as exc:
        raise ConfigError(f"{where}: {expected(what, text)} ({exc})") from None
    if label not in domain.known:
        raise ConfigError(f"{where}: {domain.unknown_proposition(label)}")
    return label


def _literals(value: object, domain: Domain, where: str) -> Literals:
    """The facts that must hold and those (written ``!p``) that must not."""
    if value is None:
        return frozenset(), frozenset()
    if not isinstance(value, list):
        raise ConfigError(f"{where}: {expected('a list of propositions, each p or !p', value)}")
    yes: set[str] = set()
    no: set[str] = set()
    for i, item in enumerate(value):
        negated = isinstance(item, str) and item.lstrip().startswith("!")
        text = item.lstrip()[1:] if negated else item
        (no if negated else yes).add(_label(text, domain, f"{where}[{i}]"))
    return frozenset(yes), frozenset(no)


def _names(value: object, domain: Domain, where: str) -> frozenset[str]:
    """Propositions without negation (effects, initial facts, an invariant's facts)."""
    yes, no = _literals(value, domain, where)
    if no:
        raise ConfigError(f"{where}: {expected('propositions without !', sorted(no))}")
    return yes


def _action(value: object, domain: Domain, where: str) -> Action:
    item = _mapping(value, ACTION_KEYS, where)
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: name: {expected('a non-empty string', name)}")
    pre, pre_not = _literals(item.get("pre"), domain, f"{where}.pre")
    when = item.get("when")
    if when is not None and not isinstance(when, list):
        raise ConfigError(f"{where}.when: {expected('a list of conditional effects', when)}")
    effects = []
    for i, w in enumerate(when or []):
        at = f"{where}.when[{i}]"
        cond = _mapping(w, WHEN_KEYS, at)
        if_true, if_false = _literals(cond.get("if"), domain, f"{at}.if")
        add, gone = (
            _names(cond.get("add"), domain, f"{at}.add"),
            _names(cond.get("del"), domain, f"{at}.del"),
        )
        effects.append(When(if_true, if_false, add, gone))
    return Action(
        name.strip(), pre, pre_not,
        _names(item.get("add"), domain, f"{where}.add"),
        _names(item.get("del"), domain, f"{where}.del"),
        tuple(effects),
    )  # fmt: skip


def _move(room: str, rooms: tuple[str, ...]) -> Action:
    """``go_<place>``: from any other place to ``room``."""
    return Action(
        f"go_{proposition_args(room)[0]}",
        pre_not=facts(room),
        add=facts(room),
        delete=frozenset(rooms),
    )


def _invariant(value: object, domain: Domain, where: str) -> Invariant:
    item = _mapping(value, INVARIANT_KEYS, where)
    group = _names(item.get("facts"), domain, f"{where}.facts")
    least, most = item.get("least", 0), item.get("most", 1)
    for key, n in (("least", least), ("most", most)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ConfigError(f"{where}.{key}: {expected('a whole number, 0 or more', n)}")
    if not group or least > most:
        found = f"{len(group)} facts, least {least}, most {most}"
        raise ConfigError(f"{where}: {expected('some facts and least <= most', found)}")
    text = item.get("text", "")
    if not isinstance(text, str):
        raise ConfigError(f"{where}.text: {expected('a string', text)}")
    return Invariant(group, least, most, text or f"{least} to {most} of {', '.join(sorted(group))}")
