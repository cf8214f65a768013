"""Natural-language constraints to LTLf formulas, in the Lang2LTL style: referring expressions
are grounded to the domain's propositions and replaced by placeholders
(:mod:`governor.ltl.english.grounding.lift`), the lifted sentence is translated, and the groundings are
substituted back.

:func:`translate_offline` reads the lifted sentence with the clause grammar
(:mod:`governor.ltl.english.grammar.normaliser`, :mod:`governor.ltl.english.grammar.clauses`), and falls back on the household
templates of :mod:`governor.ltl.english.templates`; :mod:`governor.ltl.english.lang2ltl` asks an LLM instead
(and its :func:`~governor.ltl.english.lang2ltl.translate_all` picks one of the two). A sentence neither
can translate comes back with ``formula=None`` and the reason in ``error``: nothing is dropped.
Each translation carries its English ``reading`` with the named choices it made
(:mod:`governor.ltl.english.grammar.readings`), and for an ambiguous sentence the other readings.

A past-tense action ("if you have closed the fridge") is grounded to its event, the state it
leaves holding now after not holding at the step before: ``!is_open(fridge) & Y is_open(fridge)``
(a place visited needs no event: the patterns already read a place as entered).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from governor.errors import GovernorError, SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.domain import Domain
from governor.ltl.english.grammar import precision as pr
from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar import same_group
from governor.ltl.english.grammar.clauses import clean, read
from governor.ltl.english.grammar.commands import COMMANDS, read_command
from governor.ltl.english.grammar.normaliser import symbols
from governor.ltl.english.grammar.readings import Parse, Reading
from governor.ltl.english.grounding.lift import Lifted, lift
from governor.ltl.english.grounding.spelling import correct, fused_ordinals, heads
from governor.ltl.english.readback import english
from governor.ltl.english.templates import match_lifted
from governor.ltl.satisfiability import powerset, search
from governor.ltl.simplify import neg
from governor.ltl.specs import Spec


@dataclass(frozen=True)
class Alternative:
    """Another reading of an ambiguous sentence: its formula, pattern and English reading."""

    formula: s.Formula
    pattern: str
    reading: str


@dataclass(frozen=True)
class Translation:
    """One sentence and what it became.

    ``grounding`` maps each referring expression to its formula text; ``pattern`` names the
    specification pattern (a key of :data:`governor.ltl.patterns.PATTERNS`) when one was used;
    ``formula`` is None exactly when ``error`` says why not.
    """

    sentence: str
    formula: s.Formula | None
    method: str = "offline"
    grounding: dict[str, str] = field(default_factory=dict)
    pattern: str | None = None
    error: str | None = None
    lifted: str | None = None
    lifted_formula: str | None = None
    reading: str | None = None
    ambiguous: bool = False
    alternatives: tuple[Alternative, ...] = ()

    @property
    def ok(self) -> bool:
        return self.formula is not None


def substitute(f: s.Formula, mapping: Mapping[str, s.Formula]) -> s.Formula:
    """``f`` with every argument-free atom named in ``mapping`` replaced by its formula."""
    if isinstance(f, s.Atom):
        return mapping.get(f.name, f) if not f.args else f
    if isinstance(f, s.Unary):
        return type(f)(substitute(f.arg, mapping))
    if isinstance(f, s.Binary):
        return type(f)(substitute(f.left, mapping), substitute(f.right, mapping))
    if isinstance(f, s.NAry):
        return type(f)(tuple(substitute(x, mapping) for x in f.args))
    return f


def phrase_grounding(lifted: Lifted) -> dict[str, str]:
    """Referring expression -> grounded formula text, for display."""
    return {p.text: str(p.formula) for p in lifted.phrases}


def _is_place(f: s.Formula, domain: Domain) -> bool:
    return isinstance(f, s.Atom) and (f.label in domain.rooms or f.name == "agent_at")


def _is_bare(f: s.Formula) -> bool:
    """Whether ``f`` is a bare proposition (a state such as ``alarm``), or its negation."""
    g = f.arg if isinstance(f, op.Not) else f
    return isinstance(g, s.Atom) and not g.args


def event(f: s.Formula) -> s.Formula:
    """The event of ``f`` starting to hold: ``f & Y !f`` (false at the first step)."""
    return op.And((f, op.Yesterday(neg(f))))


def _is_action_state(f: s.Formula) -> bool:
    """Whether ``f`` is about objects' states (``is_open(fridge)``), not places or bare names."""
    atoms = list(f.atoms())
    return bool(atoms) and all(a.args and a.name != "agent_at" for a in atoms)


def _mapping(lifted: Lifted, perf: frozenset[str]) -> tuple[dict[str, s.Formula], bool]:
    out, used = lifted.grounding(), False
    for name in perf:
        f = out.get(name)
        if f is not None and _is_action_state(f):
            out[name], used = event(f), True
    return out, used


def translate_offline(sentence: str, domain: Domain, convention: str | None = None) -> Translation:
    """Translate one sentence with the grounding rules and the clause grammar (the pattern
    templates when the grammar reads nothing); ``convention`` names the conventions (None: the
    one the domain declares, else the default, :data:`readings.SAFETY_CHIP`).

    Never raises for a sentence: any error inside the translation (a bug that the sentence's
    text reaches) is a failed translation whose ``error`` names it, so that one sentence never
    loses a batch and nothing unread is offered as a reading."""
    chosen = rd.check_convention(convention or domain.convention or rd.SAFETY_CHIP)
    try:
        return _translate(sentence, domain, chosen)
    except Exception as exc:
        return Translation(sentence, None, error=f"internal error: {type(exc).__name__}: {exc}")


def _translate(sentence: str, domain: Domain, convention: str) -> Translation:
    fused = fused_ordinals(sentence)
    if fused:
        return Translation(
            sentence, None, error=f"could not read {', '.join(map(repr, fused))}: a number word"
            " run together with another ordinal's ending is not corrected (which ordinal is meant"
            " is a guess); say 'second' or '2nd'",
        )  # fmt: skip
    said = same_group.cut(sentence)
    if said is not None and (said.noun in domain.groups or said.noun in heads(domain)):
        return _same_group(sentence, said, domain, convention)
    text, fixes = correct(sentence, domain)
    corrected = tuple(f"read {x}" for x in fixes)
    try:
        lifted = lift(text, domain)
    except GovernorError as exc:
        return Translation(sentence, None, error=f"grounding: {exc}")
    grounding = phrase_grounding(lifted)
    if not lifted.phrases:
        return Translation(
            sentence, None, error="grounding: no place, object or action of the domain found",
            lifted=lifted.text,
        )  # fmt: skip
    places = {p.placeholder for p in lifted.phrases if _is_place(p.formula, domain)}
    props = {
        p.placeholder for p in lifted.phrases if _is_bare(p.formula) and p.placeholder not in places
    }
    if convention in COMMANDS:
        return _command(sentence, lifted, domain, convention, corrected)
    dropped: list[str] = []
    syms = symbols(lifted.tokens, dropped)
    mapping, evented = _mapping(lifted, clean(syms, places).perf)
    try:
        parses = read(syms, places, props) or _templates(lifted.text)
        formulas = [p.reading.formula(convention) for p in parses]
        lifted_formula = formulas[0] if len(formulas) == 1 else op.And(tuple(formulas))
        _accounted(lifted, lifted_formula, syms, dropped, domain)
        if len(parses) > 1 and contradicts(lifted_formula, places, props):
            raise SpecError(
                f"expected clauses that one run can satisfy together, found a contradiction: "
                f"{lifted_formula} (one clause is read wrongly)"
            )
        grounded = domain.check(substitute(lifted_formula, mapping))
    except SpecError as exc:
        return Translation(sentence, None, grounding=grounding, error=str(exc), lifted=lifted.text)
    extra = ((rd.PAST_EVENT,) if evented else ()) + corrected
    notes = tuple(n for p in parses for n in p.reading.notes) + extra
    alternatives: tuple[Alternative, ...] = ()
    if len(parses) == 1:
        alternatives = tuple(
            _alternative(r, mapping, domain, convention, extra) for r in parses[0].alternatives
        )
    return Translation(
        sentence, grounded, "offline", grounding, "+".join(p.reading.family for p in parses),
        None, lifted.text, str(lifted_formula), rd.reading_text(english(grounded, domain), notes, convention),
        bool(alternatives), alternatives,
    )  # fmt: skip


def _accounted(
    lifted: Lifted, f: s.Formula, syms: list[str], dropped: list[str], domain: Domain
) -> None:
    """Raise a SpecError when the reading ``f`` (over placeholders) leaves the sentence not
    accounted for (:mod:`governor.ltl.english.grammar.precision`)."""
    said = {w for p in lifted.phrases for w in p.text.split()}
    lost = pr.unplaced(dropped, heads(domain), said, syms)
    if lost:
        raise SpecError(f"could not place the words: {', '.join(lost)} (no reading drops them)")
    phrases = [(p.text, p.placeholder) for p in lifted.phrases]
    spread = pr.negated_commands(f, lifted.tokens, phrases)
    if spread:
        raise SpecError(
            f"a negation read over a command to go there: {', '.join(map(repr, spread))}"
            " (a negation binds its own clause only)"
        )
    if pr.first_out_of_order(syms):
        raise SpecError(
            "'first' marks a place said later as the one to visit first: the order is not read"
        )
    first = pr.opening(lifted.tokens, phrases)
    if pr.unrequired_command(f, syms, first):
        place = next(x for x, name in phrases if name == first)
        raise SpecError(
            f"'after' read as a reaction, but the sentence commands {place!r}: the reading does"
            " not require it (a sequence? say 'first ..., then ...')"
        )


def _same_group(
    sentence: str, said: same_group.Cut, domain: Domain, convention: str
) -> Translation:
    """The rest of the sentence read on its own, conjoined with staying on the member of the
    group the phrase names that the run starts on; a failure when the domain has no such group."""
    members = domain.groups.get(said.noun)
    if members is None:
        declared = ", ".join(sorted(domain.groups)) or "none"
        return Translation(
            sentence, None, error=f"{said.phrase!r}: the {domain.name} domain declares no group"
            f" {said.noun!r} (its groups: {declared}), so which propositions are the"
            f" {said.noun}s is not known; a domain file declares them under groups:",
        )  # fmt: skip
    if not said.rest or same_group.cut(said.rest) is not None:
        found = "none" if not said.rest else "the phrase said twice"
        return Translation(
            sentence, None, error=f"{said.phrase!r}: expected a command with it, found {found}"
        )
    inner = _translate(said.rest, domain, convention)
    if inner.formula is None:
        return replace(inner, sentence=sentence)
    f = op.And((inner.formula, same_group.stay_formula(members)))
    _, sep, notes = (inner.reading or "").partition(" (reading: ")
    own = same_group.note(said.noun, said.noun, members)
    reading = f"{english(f, domain)} (reading: {notes[:-1] + '; ' if sep else ''}{own})"
    return replace(
        inner, sentence=sentence, formula=f, pattern=f"{inner.pattern}+same_group",
        lifted_formula=None, reading=reading, ambiguous=False, alternatives=(),
    )  # fmt: skip


def _command(
    sentence: str, lifted: Lifted, domain: Domain, convention: str, corrected: tuple[str, ...]
) -> Translation:
    """A short command read by the shapes of ``convention`` (nothing else reads it)."""
    grounding = phrase_grounding(lifted)
    try:
        found = read_command(lifted.tokens, convention)
        grounded = domain.check(substitute(found.formula, lifted.grounding()))
    except SpecError as exc:
        return Translation(sentence, None, grounding=grounding, error=str(exc), lifted=lifted.text)
    notes = found.notes + corrected
    return Translation(
        sentence, grounded, "offline", grounding, found.family, None, lifted.text,
        str(found.formula), rd.reading_text(english(grounded, domain), notes, convention),
    )  # fmt: skip


def contradicts(f: s.Formula, places: set[str], props: set[str]) -> bool:
    """Whether the lifted formula ``f`` over placeholders is proven to have no trace. Places are
    not kept one at a time: on finite traces "visit A and B again and again" ends in both at once.
    A search cut off by its budget, another atom, or more than six atoms is no proof."""
    names = {a.name for a in f.atoms()}
    if not names <= places | props or len(names) > 6:
        return False
    found = search(f, powerset(sorted(names)), max_depth=32, max_states=4000)
    return found.trace is None and found.exhaustive


def _alternative(
    r: Reading, mapping: dict[str, s.Formula], domain: Domain, convention: str,
    extra: tuple[str, ...],
) -> Alternative:  # fmt: skip
    f = domain.check(substitute(r.formula(convention), mapping))
    text = rd.reading_text(english(f, domain), (*r.notes, *extra), convention)
    return Alternative(f, r.family, text)


def _templates(text: str) -> list[Parse]:
    """The household templates' reading; a precedence is read as the authors' past avoidance."""
    found = match_lifted(text)
    if found is None:
        raise SpecError(f"no template matches the lifted sentence {text!r}")
    name, formula = found
    if isinstance(formula, op.WeakUntil):
        weak = _Fixed(name, (), None, rd.family_notes(name), (), formula)
        strong = op.Until(formula.left, formula.right)
        return [Parse(_Fixed("past_avoid", (), None, (rd.STRONG,), (), strong), (weak,))]
    return [Parse(_Fixed(name, (), None, rd.family_notes(name), (), formula))]


@dataclass(frozen=True)
class _Fixed(Reading):
    """A reading whose lifted formula the templates built."""

    fixed: s.Formula = s.TRUE

    def formula(self, convention: str = rd.SAFETY_CHIP) -> s.Formula:
        return self.fixed


def conjoin(translations: Sequence[Translation]) -> s.Formula:
    """The conjunction of the translations' formulas; an error names any untranslated sentence."""
    failed = [t.sentence for t in translations if t.formula is None]
    if failed:
        raise SpecError(f"expected every sentence translated, found untranslated: {failed}")
    formulas = [t.formula for t in translations if t.formula is not None]
    if not formulas:
        raise SpecError("expected at least one translation, found none")
    return formulas[0] if len(formulas) == 1 else op.And(tuple(formulas))


def spec_from(translation: Translation, verified: bool = True) -> Spec:
    """The spec of a translation (``verified``: a person accepted it after seeing it)."""
    if translation.formula is None:
        raise SpecError(f"{translation.sentence!r} has no formula: {translation.error}")
    return Spec(
        translation.sentence,
        translation.formula,
        verified,
        translation.method,
        dict(translation.grounding),
    )
