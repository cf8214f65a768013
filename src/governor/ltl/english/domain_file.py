"""Domains of the user's own vocabulary: from lists of propositions and places, or from a domain
file.

A place ``lobby`` becomes the room proposition ``agent_at(lobby)``, as in the household: the
agent is in exactly one place at a time. A domain file is a YAML (or, named ``*.json``, JSON)
mapping::

    name: warehouse                 # required: the domain's name, used in messages
    propositions: [charger, is_open(dock_door), is_switchedon(alarm)]  # required: a list
    places: [lobby, garage]         # optional: places the agent is in, exactly one at a time
    aliases:                        # optional: phrase -> the object (or proposition) it names
      charging station: charger
      loading door: is_open(dock_door)
    rules:                          # optional: LTL formulas (infix) that hold on every trace
      - "!(is_open(dock_door) & is_switchedon(alarm))"
    groups:                         # optional: name -> propositions, at most one at a time
      floor: [ground_floor, upper_floor]
    conventions: drone_commands     # optional: the English translator's conventions
    init: [agent_at(lobby)]         # optional, with moves, actions and invariants: the actions
    actions: [...]                  # of the conflicts check (:mod:`governor.ltl.domain_actions`)

An alias phrase has one to three words (a leading "the" or "a" is dropped) and names an object:
a bare proposition, a place, or an argument of a proposition; a proposition with one argument
stands for that argument (``is_open(dock_door)`` for ``dock_door``). A rule without temporal
operators holds at every step (it is read as ``G rule``); the rules must be satisfiable together.
A group names two or more of the propositions of which at most one holds at a time (a rule
``!(a & b)`` for each pair); "go to A without changing floors" is then A reached on the one
floor the run starts on (``F A & (G ground_floor | G upper_floor)``). The group's name is a
word ("floor"; the translator also reads its plural). ``conventions`` names the conventions the
translator reads the domain's sentences by (one of
:data:`governor.ltl.english.grammar.readings.CONVENTIONS`); a ``--convention`` given on the
command line overrides it.
Every error names the file, the field and what was expected; unknown keys are errors. At most
:data:`MAX_NAMES` propositions and :data:`MAX_PLACES` places.

A domain's verbs ("open the loading door" -> ``is_open(dock_door)``) come from the phrase table
its caller gives (none by default; ``governor ltl`` gives the household's, whose predicates
``is_open``, ``is_switchedon``, ``is_grabbed``, ``is_in`` and ``is_on`` a domain file may use).

World-free: imports the error tree, the file readers, the LTL domain, parser and action domains,
and the translator's lexicon and phrase-table type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from governor.errors import ConfigError, SpecError, expected
from governor.files import load_mapping
from governor.ltl import operators as op
from governor.ltl.actions import ActionDomain
from governor.ltl.domain import Domain, proposition_args, spelling_key
from governor.ltl.domain_actions import FIELDS as ACTION_FIELDS
from governor.ltl.domain_actions import compile_actions
from governor.ltl.english import lexicon as lx
from governor.ltl.english.grammar.readings import CONVENTIONS
from governor.ltl.english.grounding.world_phrases import WorldPhrases
from governor.ltl.operators import Always
from governor.ltl.parser import atom, parse
from governor.ltl.satisfiability import find_trace
from governor.ltl.simplify import conj
from governor.ltl.syntax import Formula

FIELDS = (
    "name",
    "propositions",
    "places",
    "aliases",
    "rules",
    "groups",
    "conventions",
    *ACTION_FIELDS,
)
"""The keys a domain file may have."""
MAX_NAMES = 1000
"""Most propositions (with places) a user domain may have."""
MAX_PLACES = 200
"""Most places: the exactly-one rule over them grows with their square."""
RULE_DEPTH = 8
"""Longest trace searched for when checking that the rules can hold together."""
A_PROPOSITION = "a proposition (a name, or a name with arguments such as is_open(door))"


def split_names(text: str) -> list[str]:
    """Comma-separated names, commas inside parentheses kept: ``a,is_in(x,y)`` -> two names."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [x.strip() for x in out if x.strip()]


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def proposition(text: object, where: str) -> str:
    """The canonical label of a proposition written as ``text``; an error names ``where``."""
    if not isinstance(text, str):
        raise ConfigError(f"{where}: {expected(A_PROPOSITION, text)}")
    try:
        return atom(text).label
    except SpecError as exc:
        raise ConfigError(
            f"{where}: {expected(A_PROPOSITION, text)} ({_first_line(exc)})"
        ) from None


def place(text: object, where: str) -> str:
    """The room proposition ``agent_at(text)`` of a place name."""
    what = "a place name (letters, digits and _, such as loading_bay)"
    if not isinstance(text, str):
        raise ConfigError(f"{where}: {expected(what, text)}")
    label = proposition(text, where)
    if "(" in label:
        raise ConfigError(f"{where}: {expected(what, text)}")
    return f"agent_at({label})"


def user_domain(
    name: str,
    propositions: Iterable[str],
    places: Iterable[str] = (),
    aliases: Mapping[str, str] | None = None,
    rules: Iterable[str] = (),
    where: str = "",
    phrases: WorldPhrases | None = None,
) -> Domain:
    """A domain over ``propositions`` and the room propositions of ``places`` (exactly one holds),
    with ``aliases`` (phrase -> object) and ``rules`` (infix formulas); ``where`` prefixes errors;
    ``phrases`` is the phrase table of the domain's verbs (none by default).
    """
    pre = f"{where}: " if where else ""
    props = [proposition(p, f"{pre}propositions[{i}]") for i, p in enumerate(propositions)]
    rooms = [place(p, f"{pre}places[{i}]") for i, p in enumerate(places)]
    total = list(dict.fromkeys([*props, *rooms]))
    if len(set(rooms)) > MAX_PLACES:
        raise ConfigError(f"{pre}places: {expected(f'at most {MAX_PLACES}', len(set(rooms)))}")
    if not total or len(total) > MAX_NAMES:
        found = f"{len(total)} propositions"
        raise ConfigError(f"{pre}{expected(f'1 to {MAX_NAMES} propositions and places', found)}")
    objects = {a for p in total for a in proposition_args(p)}
    extra = _alias_keys(aliases or {}, objects, pre)
    domain = Domain.of(name, total, list(dict.fromkeys(rooms)), extra)
    if phrases is not None:
        domain = replace(domain, phrases=phrases)
    formulas = [_rule(r, domain, f"{pre}rules[{i}]") for i, r in enumerate(rules)]
    if not formulas:
        return domain
    domain = replace(domain, rules=[*domain.rules, *formulas])
    _check_rules(domain, pre)
    return domain


def flag_domain(
    props: str | None, places: str | None, phrases: WorldPhrases | None = None
) -> Domain:
    """The ``custom`` domain of the ``--props`` and ``--places`` lists (comma-separated), with
    the phrase table ``phrases``."""
    prop_list, place_list = split_names(props or ""), split_names(places or "")
    for i, x in enumerate(prop_list):
        proposition(x, f"--props: item {i + 1}")
    for i, x in enumerate(place_list):
        place(x, f"--places: item {i + 1}")
    flags = [f for f, v in (("--props", props), ("--places", places)) if v is not None]
    return user_domain("custom", prop_list, place_list, where=" and ".join(flags), phrases=phrases)


def _alias_keys(aliases: Mapping[str, str], objects: set[str], pre: str) -> dict[str, str]:
    """Spelling key -> object of each alias; an error for a bad phrase or an unknown object."""
    own = {spelling_key(o): o for o in objects}
    out: dict[str, str] = {}
    for phrase, target in aliases.items():
        where = f"{pre}aliases[{phrase!r}]"
        words = lx.words(phrase) if isinstance(phrase, str) else []
        while words and words[0] in lx.DETERMINERS:
            words = words[1:]
        if not 1 <= len(words) <= 3:
            raise ConfigError(f"{where}: {expected('a phrase of one to three words', phrase)}")
        label = proposition(target, where)
        args = proposition_args(label)
        obj = args[0] if len(args) == 1 else None
        if obj not in objects:
            what = f"an object of the domain ({', '.join(sorted(objects))}) or a proposition"
            raise ConfigError(f"{where}: {expected(what + ' with one argument', target)}")
        key = spelling_key("".join(words))
        taken = own.get(key, out.get(key))
        if taken is not None and taken != obj:
            raise ConfigError(f"{where}: the phrase already names {taken}, not {obj}")
        out[key] = obj
    return out


def _rule(text: object, domain: Domain, where: str) -> Formula:
    what = "an LTL formula in infix syntax over the domain's propositions"
    if not isinstance(text, str):
        raise ConfigError(f"{where}: {expected(what, text)}")
    try:
        formula = domain.check(parse(text))
    except SpecError as exc:
        raise ConfigError(f"{where}: {expected(what, text)} ({_first_line(exc)})") from None
    return formula if formula.has_future or formula.has_past else Always(formula)


def _check_rules(domain: Domain, pre: str) -> None:
    try:
        alphabet = domain.alphabet_for(*domain.rules)
    except SpecError:
        return  # too many propositions to enumerate: the rules are taken as they are
    if find_trace(conj(*domain.rules), alphabet, RULE_DEPTH) is None:
        raise ConfigError(f"{pre}rules: no trace of the domain satisfies them all together")


@dataclass(frozen=True)
class DomainFile:
    """What a domain file describes: the domain, its actions (None without ``actions``, ``moves``,
    ``init`` or ``invariants``) and its rules as (text, formula) pairs, in the file's order."""

    domain: Domain
    actions: ActionDomain | None
    rules: tuple[tuple[str, Formula], ...]


def load_domain_file(path: str | Path, phrases: WorldPhrases | None = None) -> Domain:
    """The domain a YAML or JSON domain file describes (see the module's docstring), with the
    phrase table ``phrases``."""
    return read_domain_file(path, phrases).domain


def read_domain_file(path: str | Path, phrases: WorldPhrases | None = None) -> DomainFile:
    """The domain, actions and rules of a YAML or JSON domain file, every part checked; the
    domain carries the phrase table ``phrases``."""
    path = Path(path)
    data = load_mapping(path)
    unknown = sorted(str(k) for k in data if k not in FIELDS)
    if unknown:
        raise ConfigError(f"{path}: {expected('only the keys ' + ', '.join(FIELDS), unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{path}: name: {expected('a non-empty string', name)}")
    if "propositions" not in data:
        raise ConfigError(f"{path}: propositions: missing (a list of propositions)")
    lists = {k: _field(path, data, k, list, "a list") for k in ("propositions", "places", "rules")}
    aliases = _field(path, data, "aliases", dict, "a mapping from phrases to objects")
    texts = lists["rules"]
    domain = user_domain(
        name.strip(), lists["propositions"], lists["places"], aliases, texts, str(path), phrases
    )
    groups = _groups(path, data, domain)
    convention = data.get("conventions")
    if convention is not None and convention not in CONVENTIONS:
        raise ConfigError(f"{path}: conventions: {expected(' or '.join(CONVENTIONS), convention)}")
    exclusive = [
        Always(op.Not(op.And((atom(a), atom(b)))))
        for members in groups.values()
        for i, a in enumerate(members)
        for b in members[i + 1 :]
    ]
    domain = replace(
        domain, groups=groups, convention=convention, rules=[*exclusive, *domain.rules]
    )
    if exclusive:
        _check_rules(domain, f"{path}: groups and ")
    rules = tuple(zip(texts, domain.rules[len(domain.rules) - len(texts) :], strict=True))
    return DomainFile(domain, compile_actions(data, domain, str(path)), rules)


MAX_GROUPS = 50
"""Most groups a domain file may declare."""


def _groups(path: Path, data: Mapping[str, Any], domain: Domain) -> dict[str, tuple[str, ...]]:
    """Group name -> its propositions (each of the domain, two or more, no repeats)."""
    raw = _field(path, data, "groups", dict, "a mapping from group names to proposition lists")
    if len(raw) > MAX_GROUPS:
        raise ConfigError(f"{path}: groups: {expected(f'at most {MAX_GROUPS}', len(raw))}")
    out: dict[str, tuple[str, ...]] = {}
    for name, members in raw.items():
        where = f"{path}: groups[{name!r}]"
        if not isinstance(name, str) or not name.isalpha() or not name.islower():
            raise ConfigError(f"{where}: {expected('a lower-case word as the name', name)}")
        if not isinstance(members, list) or len(members) < 2:
            raise ConfigError(f"{where}: {expected('a list of two or more propositions', members)}")
        labels = [proposition(m, f"{where}[{i}]") for i, m in enumerate(members)]
        unknown = [x for x in labels if x not in domain.known]
        twice = [x for i, x in enumerate(labels) if x in labels[:i]]
        if unknown or twice:
            found = ", ".join(unknown) if unknown else f"{twice[0]} twice"
            raise ConfigError(f"{where}: {expected('distinct propositions of the domain', found)}")
        out[name] = tuple(labels)
    return out


def _field(path: Path, data: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    """The value of an optional field (empty when absent), checked to be of ``kind``."""
    value = data.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ConfigError(f"{path}: {key}: {expected(what, value)}")
    return value
