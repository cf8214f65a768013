"""English templates of the specification patterns, matched against lifted sentences.

A lifted sentence has its referring expressions replaced by placeholders (``P1``, ``P2``; a
described state reads ``P1 holds``). Each template is a regular expression over the whole lifted
sentence, written with the macros below (``{NEG}``: "don't", "never", "you cannot", ...), and a
builder from the placeholders (and a count) to a pattern formula. The first template that
matches wins.

Readings: "A before B", "don't B before/until A", "don't B if you haven't A", "only B after A"
-> ``precedence(A, B)`` (B waits for A; neither must happen); "if A, B later", "A means you have
to B" -> ``delayed_reaction``; "B right after A" -> ``prompt_reaction``; "A means you cannot B",
"don't B if you have A" -> ``future_avoidance``; "don't B if A holds" -> ``G(A -> !B)``;
"never A" -> ``global_avoidance``; "at most n times", "no more than n", "only ... twice",
"never ... twice", "less than n" -> ``upper_restricted_avoidance``; "at least n times" ->
``lower_restricted_avoidance``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import patterns as pt
from governor.ltl import syntax as s

_MACROS = {
    "NEG": r"(?:do not|never|not|no one can|nobody can|you (?:cannot|can never|can no longer|"
    r"must not|must never|may not|should not|should never|are not allowed to|are never allowed"
    r" to|are not permitted to|will not be able to|will never be able to|will not be allowed to))",
    "MUST": r"(?:you (?:have to|must|need to|will have to|will need to|should|are required to|"
    r"have got to)|(?:do not forget to|remember to|make sure to|be sure to))",
    "LATER": r"(?: (?:later on|later|in the future|afterwards|afterward|after that|eventually|"
    r"at some point|then|too|as well|also|again|once|even once|at least once))*",
    "AFTER": r"(?: (?:ever|even once|again|anymore|any more|afterwards|afterward|after that|"
    r"from then on|later|at all|in the future|ever again))*",
    "PERF": r"you(?: have| had| did)?(?: ever| already| once)?",
    "NOTPERF": r"you (?:have not|did not|had not|have never|never|do not)(?: yet| already)?",
    "IF": r"(?:if|when|whenever|once|after|as soon as)",
    "CAN": r"(?:you (?:can|may|are allowed to|could)(?: only)?|only)",
    "N": r"(?P<n>once|twice|thrice|one|two|three|four|five|six|seven|eight|nine|ten|\d+)"
    r"(?: times?)?",
    "A": r"(?P<a>P\d+)(?: holds)?",
    "B": r"(?P<b>P\d+)(?: holds)?",
    "AS": r"(?P<a>P\d+) holds",
    "SINCE": r"(?: you(?: have)?(?: already)?)?",
    "SOON": r"(?:immediately|right away|next)(?: after that| after)?",
}
_NUMBERS = {"once": 1, "twice": 2, "thrice": 3, "one": 1, "two": 2, "three": 3, "four": 4}
_NUMBERS |= {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
Build = Callable[[s.Formula, s.Formula, int], s.Formula]


def _n(n: int, less: int = 0) -> int:
    if n - less < 0:
        raise SpecError(f"count: expected a number of times >= {less}, found {n}")
    return n - less


_TEMPLATES: list[tuple[str, str, Build]] = [
    # counting (a visit is an entering episode)
    ("upper_rest_avoid", r"once {PERF} {A}(?: then)? {NEG} (?P=a) again",
     lambda a, b, n: pt.upper_restricted_avoidance(a, 1)),
    ("upper_rest_avoid", r"(?:{CAN} |{MUST} )?(?:only )?{A}(?: for)? (?:at most|up to|no more"
     r" than|not more than|a maximum of|maximum) {N}",
     lambda a, b, n: pt.upper_restricted_avoidance(a, n)),
    ("upper_rest_avoid", r"(?:{CAN} |{MUST} )?(?:only )?{A}(?: for)? {N} (?:at most|at the most"
     r"|maximum|or less|or fewer)", lambda a, b, n: pt.upper_restricted_avoidance(a, n)),
    ("upper_rest_avoid", r"(?:you (?:can|may) only|only) {A} {N}",
     lambda a, b, n: pt.upper_restricted_avoidance(a, n)),
    ("upper_rest_avoid", r"{NEG} {A}(?: for)? (?:more than|over) {N}",
     lambda a, b, n: pt.upper_restricted_avoidance(a, n)),
    ("upper_rest_avoid", r"{NEG} {A}(?: for)? {N}",
     lambda a, b, n: pt.upper_restricted_avoidance(a, _n(n, 1))),
    ("upper_rest_avoid", r"(?:{CAN} )?(?:only )?{A} (?:less|fewer) than {N}(?: is (?:allowed|"
     r"ok|permitted))?", lambda a, b, n: pt.upper_restricted_avoidance(a, _n(n, 1))),
    ("lower_rest_avoid", r"(?:{MUST} )?{A}(?: for)? at least {N}",
     lambda a, b, n: pt.lower_restricted_avoidance(a, n)),
    ("exact_rest_avoid", r"(?:{MUST} )?{A}(?: for)? exactly {N}",
     lambda a, b, n: pt.exact_restricted_avoidance(a, n)),
    # avoidance
    ("global_avoid", r"(?:{NEG}|(?:always )?(?:avoid|stay away from|keep away from|be away from))"
     r"(?: ever)? {A}(?: at any time| at all times| ever| at all| anytime| always)?",
     lambda a, b, n: pt.global_avoidance(a)),
    ("instant_react", r"{NEG} {B} (?:if|when|whenever|while|as long as) {AS}",
     lambda a, b, n: pt.instantaneous_reaction(a, op.Not(b))),
    ("instant_react", r"(?:if|when|whenever|while) {AS} {NEG} {B}",
     lambda a, b, n: pt.instantaneous_reaction(a, op.Not(b))),
    ("instant_react", r"(?:{MUST}|always) {B} (?:if|when|whenever|while) {AS}",
     lambda a, b, n: pt.instantaneous_reaction(a, b)),
    # reactions that must be immediate
    ("prompt_react", r"(?:{MUST} )?{B} (?:right|immediately|directly|just) after{SINCE} {A}",
     lambda a, b, n: pt.prompt_reaction(a, b)),
    ("prompt_react", r"{A} means {MUST} {B} {SOON}", lambda a, b, n: pt.prompt_reaction(a, b)),
    ("prompt_react", r"{IF} {PERF} {A}(?: then)? {MUST} {B} {SOON}",
     lambda a, b, n: pt.prompt_reaction(a, b)),
    # precedence: b waits for a
    ("precedence", r"(?:{MUST} )?(?:first )?{A}(?: first)? before(?: you)?(?: can)? {B}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"{NEG} {B} (?:before|until|unless){SINCE}(?: first)? {A}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"{NEG} {B} (?:if|when) {NOTPERF} {A}", lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"before(?: you)? {B} {MUST} {A}", lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"before(?: you)? {A} {NEG} {B}", lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"(?:{CAN} )?(?:only )?{B}(?: but)? only (?:after|once|when|if){SINCE} {A}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"only {B} (?:after|once|when|if){SINCE} {A}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"only (?:after|once|when|if){SINCE} {A}(?: then)? (?:{CAN} )?{B}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"(?:{MUST} |{CAN} )?{B} (?:only )?after{SINCE} {A}",
     lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"{A} (?:will )?(?:unlocks?|allows? you to (?:visit|enter)|lets? you (?:visit"
     r"|enter)) {B}(?: for you)?(?: to (?:visit|enter|go))?", lambda a, b, n: pt.precedence(a, b)),
    ("precedence", r"{MUST} {A} (?:in order|so as) to {B}{LATER}",
     lambda a, b, n: pt.precedence(a, b)),
    # future avoidance: after a, never b
    ("future_avoid", r"{A} means {NEG} {B}{AFTER}", lambda a, b, n: pt.future_avoidance(a, b)),
    ("future_avoid", r"{NEG} {B}{AFTER} (?:if|once|after|when|whenever|since) {PERF} {A}{AFTER}",
     lambda a, b, n: pt.future_avoidance(a, b)),
    ("future_avoid", r"{NEG} {B}{AFTER} after {A}", lambda a, b, n: pt.future_avoidance(a, b)),
    ("future_avoid", r"{IF} {PERF} {A}(?: then)? {NEG} {B}{AFTER}",
     lambda a, b, n: pt.future_avoidance(a, b)),
    ("future_avoid", r"(?:you can )?{A}(?: and| but)(?: then)? {NEG} {B}{AFTER}",
     lambda a, b, n: pt.future_avoidance(a, b)),
    # delayed reaction: after a, b sooner or later
    ("delay_react", r"{IF} {PERF} {A}(?: then)? {MUST} {B}{LATER}",
     lambda a, b, n: pt.delayed_reaction(a, b)),
    ("delay_react", r"(?:{MUST} )?{B}{LATER} (?:if|once|when|whenever|after) {PERF} {A}{LATER}",
     lambda a, b, n: pt.delayed_reaction(a, b)),
    ("delay_react", r"{A} means {MUST} {B}{LATER}", lambda a, b, n: pt.delayed_reaction(a, b)),
    ("delay_react", r"(?:when|whenever|once|after) {PERF} {A} {B}{LATER}",
     lambda a, b, n: pt.delayed_reaction(a, b)),
    ("delay_react", r"(?:you can )?{A}(?: but)?(?: then)? {MUST} {B}{LATER}",
     lambda a, b, n: pt.delayed_reaction(a, b)),
    # others
    ("wait", r"(?:{MUST} )?(?:stay|remain|wait)(?: in| at| near| by)? {A} until{SINCE} {B}",
     lambda a, b, n: pt.wait(a, b)),
    ("visit", r"{MUST} (?:eventually )?{A}(?: eventually| at some point)?",
     lambda a, b, n: pt.visit(a)),
]  # fmt: skip


def _compile(template: str) -> re.Pattern[str]:
    text = template
    for name in sorted(_MACROS, key=len, reverse=True):
        text = text.replace("{" + name + "}", _MACROS[name])
    return re.compile(text)


TEMPLATES: list[tuple[str, re.Pattern[str], Build]] = [
    (name, _compile(t), build) for name, t, build in _TEMPLATES
]
"""The lifted-sentence templates in the order they are tried: (pattern name, regex, builder)."""


def match_lifted(text: str) -> tuple[str, s.Formula] | None:
    """The pattern and lifted formula (over atoms ``P1``, ``P2``, ...) of a lifted sentence."""
    for name, regex, build in TEMPLATES:
        m = regex.fullmatch(text)
        if m is None:
            continue
        groups = m.groupdict()
        a, b = (s.Atom(groups[k]) if groups.get(k) else s.TRUE for k in ("a", "b"))
        n = groups.get("n")
        count = 0 if n is None else _NUMBERS.get(n) or int(n)
        return name, build(a, b, count)
    return None
