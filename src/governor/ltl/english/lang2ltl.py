"""Translation through an LLM in the Lang2LTL style, every step validated.

1. Referring expressions: the model lists them as a JSON list of phrases copied from the sentence.
2. Grounding: the offline grounder first; the model only for the phrases it cannot ground, choosing
   from the domain's propositions; an unknown proposition is an error naming the known ones.
3. The lifted sentence (phrases replaced by ``P1``, ``P2``, ...) becomes a formula in infix or
   prefix syntax over exactly those placeholders; one that does not parse, or leaves one out, is
   asked for once more with the error.
4. The groundings are substituted back.

Worked examples come as earlier user and assistant turns (a base model answers in kind; a chat
model reads them as a conversation), and each step has a short ``max_tokens``. Every model call
goes through the backend, so it is counted. A failing call (``BackendError``)
falls back to :func:`translate_offline`, and the translation's ``method`` says so.
:func:`translate_all` translates sentences offline, or through a backend when one is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from governor.backends.base import Backend, Message
from governor.errors import BackendError, SpecError, expected
from governor.files import json_loads
from governor.ltl import patterns as pt
from governor.ltl.domain import Domain, proposition_args, spelling_key
from governor.ltl.english.grounding.lift import ground_phrase
from governor.ltl.english.readback import pattern_of
from governor.ltl.english.translate import Translation, substitute, translate_offline
from governor.ltl.parser import parse, parse_prefix
from governor.ltl.syntax import Atom, Formula

EXTRACT_PROMPT = """\
You help a person write safety rules for a household robot. Given one rule, list its referring \
expressions: the shortest phrases that each name one fact about the world that a sensor could \
check at a moment, such as where the robot is ("go to the kitchen"), the state of an object \
("the oven is on") or what an action leaves behind ("put the cup in the sink", "shut the door"). \
Keep each verb with its object. Leave out the words about time, order, counting, permission and \
negation ("before", "later", "never", "at most twice", "you must", "don't").
Copy each phrase exactly as it is written in the rule, in the order it appears, each once.
Answer with a JSON list of strings and nothing else."""
EXTRACT_EXAMPLES = (
    ("wash the cup before you enter the study", '["wash the cup", "enter the study"]'),
    ("if the oven is on, never leave the kitchen", '["the oven is on", "leave the kitchen"]'),
    ("you may water the plants at most three times", '["water the plants"]'),
)

GROUND_PROMPT = """\
You connect phrases from a robot's safety rule to the propositions its sensors report. For each \
phrase, choose the proposition from the list that is true exactly when the phrase holds or has \
just been done. Write ! before it for the opposite state (shutting a door: !is_open(door)). Use \
only propositions from the list, spelled exactly as listed; answer null for a phrase that none \
of them fits.
Answer with one JSON object mapping each phrase to its proposition and nothing else.

Propositions:
{propositions}"""

TRANSLATE_PROMPT = """\
You translate one rule for a robot into linear temporal logic over a finite sequence of steps. \
The facts in the rule have been replaced by placeholders P1, P2, ...; a placeholder is true at \
the steps where its fact holds. Use only the placeholders as atoms, and these operators: \
! (not), & (and), | (or), -> (implies), <-> (iff), X (at the next step), F (now or at a later \
step), G (now and at every later step), U (until; the right side must come), W (until, or \
forever), with parentheses. To count separate stretches where a placeholder holds, write \
at_most(P1, n), at_least(P1, n) or exactly(P1, n).
Answer with the formula alone on one line."""
TRANSLATE_EXAMPLES = (
    ("P1 must not happen until P2 has", "!P1 W P2"),
    ("whenever P1, sooner or later P2", "G(P1 -> F P2)"),
    ("after P1 you may never P2 again", "G(P1 -> G !P2)"),
    ("when P1 holds, so must P2", "G(P1 -> P2)"),
    ("P1 is forbidden", "G !P1"),
    ("P1 right after P2", "G(P2 -> X P1)"),
    ("P1 no more than 3 times", "at_most(P1, 3)"),
)
MAX_TOKENS = {"extract": 80, "ground": 200, "translate": 60}
"""Tokens a reply of each step may take (a list of phrases, a JSON object, one formula)."""
STOP = {"extract": ("\n",), "ground": (), "translate": ("\n",)}
"""Where a reply of each step ends: the list and the formula are one line (a base model goes on
writing after its answer); the JSON object may span lines."""

RETRY_PROMPT = """That formula cannot be used: {error}
Answer with a corrected formula alone on one line."""

MAX_OFFERED = 150
"""Most propositions offered to the model in the grounding step."""
_MACRO = re.compile(r"\b(at_most|at_least|exactly)\s*\(\s*(P\d+)\s*,\s*(\d+)\s*\)")
_COUNTS = {
    "at_most": pt.upper_restricted_avoidance,
    "at_least": pt.lower_restricted_avoidance,
    "exactly": pt.exact_restricted_avoidance,
}


def translate_all(
    sentences: Iterable[str], domain: Domain, backend: Backend | None = None
) -> list[Translation]:
    """One translation per sentence, in order: offline, or through ``backend`` when given."""
    items = list(sentences)
    if backend is None:
        return [translate_offline(x, domain) for x in items]
    return [translate_llm(x, domain, backend) for x in items]


def translate_llm(sentence: str, domain: Domain, backend: Backend) -> Translation:
    """Translate one sentence through ``backend``; offline when a model call fails."""
    try:
        return _translate(sentence, domain, backend)
    except BackendError as exc:
        fallback = translate_offline(sentence, domain)
        return replace(fallback, method=f"offline (llm failed: {exc})")


def _ask(backend: Backend, messages: list[Message], step: str) -> str:
    return backend.chat(
        messages, temperature=0.0, max_tokens=MAX_TOKENS[step], stop=STOP[step] or None
    ).text


def _shots(examples: tuple[tuple[str, str], ...]) -> list[Message]:
    """Worked examples as earlier turns: the rule, then its answer."""
    return [m for rule, answer in examples for m in (_user(rule), Message("assistant", answer))]


def _translate(sentence: str, domain: Domain, backend: Backend) -> Translation:
    step = "step 1 (referring expressions)"
    try:
        asked = [_sys(EXTRACT_PROMPT), *_shots(EXTRACT_EXAMPLES), _user(sentence)]
        phrases = _phrases(sentence, _ask(backend, asked, "extract"))
        step = "step 2 (grounding)"
        grounded = _ground(phrases, domain, backend)
    except SpecError as exc:
        return Translation(sentence, None, "llm", error=f"{step}: {exc}")
    grounding = {p: str(f) for p, f in grounded.items()}
    names: dict[Formula, str] = {}
    for phrase in phrases:  # placeholders numbered in the order the phrases appear
        names.setdefault(grounded[phrase], f"P{len(names) + 1}")
    lifted = " ".join(sentence.split())
    for phrase in sorted(phrases, key=len, reverse=True):
        lifted = re.sub(_whole(phrase), names[grounded[phrase]], lifted, flags=re.IGNORECASE)
    mapping = {name: f for f, name in names.items()}
    messages = [_sys(TRANSLATE_PROMPT), *_shots(TRANSLATE_EXAMPLES), _user(lifted)]
    reply = _ask(backend, messages, "translate")
    try:
        formula = read_formula(reply, mapping)
    except SpecError as first:
        retry = Message("user", RETRY_PROMPT.format(error=first))
        messages += [Message("assistant", reply), retry]
        try:
            formula = read_formula(_ask(backend, messages, "translate"), mapping)
        except SpecError as exc:
            return Translation(
                sentence, None, "llm", grounding, None,
                f"step 3 (translation): {exc} (after one retry)", lifted,
            )  # fmt: skip
    grounded_formula = substitute(formula, mapping)
    found = pattern_of(grounded_formula, domain)
    return Translation(
        sentence, domain.check(grounded_formula), "llm", grounding,
        found[0] if found else None, None, lifted, str(formula),
    )  # fmt: skip


def _sys(text: str) -> Message:
    return Message("system", text)


def _user(rule: str) -> Message:
    return Message("user", f"Rule: {rule}")


def _json(text: str, kind: type, what: str) -> Any:
    body = re.sub(r"^```(?:json)?|```$", "", text.strip()).strip()
    try:
        value = json_loads(body)
    except json.JSONDecodeError:
        value = _leading_json(body)  # the answer, then words a base model ran on with
        if value is None:
            raise SpecError(expected(what, text.strip()[:200])) from None
    if not isinstance(value, kind):
        raise SpecError(expected(what, value))
    return value


def _leading_json(body: str) -> Any:
    """The JSON list or object that ``body`` starts with, when only text follows it (None else)."""
    if not body.startswith(("[", "{")):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError:
        return None
    rest = body[end:].strip()
    return value if not rest.startswith(("[", "{", ",", ":")) else None


def _phrases(sentence: str, reply: str) -> list[str]:
    """Step 1's answer, checked: non-empty phrases, each copied from the sentence."""
    items = _json(reply, list, "a JSON list of phrases")
    if not items or not all(isinstance(x, str) and x.strip() for x in items):
        raise SpecError(expected("a non-empty JSON list of phrases", items))
    low = " ".join(sentence.lower().split())
    out = list(dict.fromkeys(" ".join(x.split()) for x in items))
    for phrase in out:
        if not re.search(_whole(phrase), low, flags=re.IGNORECASE):
            raise SpecError(f"expected whole phrases copied from the sentence, found {phrase!r}")
    return out


def _whole(phrase: str) -> str:
    return rf"(?<!\w){re.escape(phrase)}(?!\w)"


def _ground(phrases: list[str], domain: Domain, backend: Backend) -> dict[str, Formula]:
    """Step 2: the offline grounder first, then the model for the rest, all checked."""
    out: dict[str, Formula] = {}
    rest = []
    for phrase in phrases:
        found = ground_phrase(phrase, domain)  # raises for an object the domain lacks
        if found is None:
            rest.append(phrase)
        else:
            out[phrase] = found
    if not rest:
        return out
    offered = "\n".join(f"- {p}" for p in offer(domain, rest))
    messages = [_sys(GROUND_PROMPT.format(propositions=offered)), Message("user", json.dumps(rest))]
    reply = _ask(backend, messages, "ground")
    answer = _json(reply, dict, "a JSON object from phrases to propositions")
    for phrase in rest:
        value = answer.get(phrase)
        if not isinstance(value, str):
            what = f"a proposition for {phrase!r} (known: {', '.join(offer(domain, [phrase]))})"
            raise SpecError(expected(what, value))
        f = parse(value)
        if f.has_future or f.has_past:
            raise SpecError(expected(f"a proposition for {phrase!r}", value))
        out[phrase] = domain.check(f)
    return out


def offer(domain: Domain, phrases: list[str]) -> list[str]:
    """The propositions offered for ``phrases``: all of a small domain; else the rooms and those
    about objects whose names occur in the phrases."""
    if len(domain.propositions) <= MAX_OFFERED:
        return domain.propositions
    keys = [spelling_key(p) for p in phrases]
    objs = {o for o in domain.objects if any(spelling_key(o) in k for k in keys)}
    near = [p for p in domain.propositions if p in domain.rooms or objs & set(proposition_args(p))]
    return near[:MAX_OFFERED]


def read_formula(reply: str, placeholders: dict[str, Formula]) -> Formula:
    """The formula in a model's reply (infix, or prefix), over the placeholders only."""
    lines = [x.strip().strip("`").strip() for x in reply.strip().splitlines()]
    lines = [x for x in lines if x and not x.startswith("```")]
    text = re.sub(r"^(?:formula|answer)\s*:\s*", "", lines[0] if lines else "", flags=re.I)
    macros: dict[str, Formula] = {}

    def macro(m: re.Match[str]) -> str:
        name = f"M{len(macros) + 1}"
        macros[name] = _COUNTS[m.group(1)](Atom(m.group(2)), int(m.group(3)))
        return name

    text = _MACRO.sub(macro, text)
    try:
        formula = parse(text)
    except SpecError as exc:
        try:
            formula = parse_prefix(text)
        except SpecError:
            raise exc from None
    formula = substitute(formula, macros)
    unknown = sorted(formula.atom_labels() - set(placeholders))
    if unknown:
        what = f"only the placeholders {', '.join(placeholders)} as atoms"
        raise SpecError(expected(what, ", ".join(unknown)))
    missing = sorted(set(placeholders) - formula.atom_labels())
    if missing:  # a fact of the rule left out of its formula
        raise SpecError(expected(f"every placeholder ({', '.join(placeholders)})", missing))
    return formula
