"""Natural-language constraints to LTLf formulas, in the Lang2LTL style: referring expressions
are grounded to the domain's propositions and replaced by placeholders
(:mod:`governor.ltl.grounding`), the lifted sentence is translated, and the groundings are
substituted back.

:func:`translate_offline` translates the lifted sentence by matching English templates of the
specification patterns; :mod:`governor.ltl.lang2ltl` asks an LLM instead (and its
:func:`~governor.ltl.lang2ltl.translate_all` picks one of the two). A sentence neither can
translate comes back with ``formula=None`` and the reason in ``error``: nothing is dropped.
The English readings the templates give each pattern are listed in :mod:`governor.ltl.templates`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from governor.errors import GovernorError, SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.domain import Domain
from governor.ltl.grounding import Lifted, lift
from governor.ltl.templates import match_lifted


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


def translate_offline(sentence: str, domain: Domain) -> Translation:
    """Translate one sentence with the grounding rules and the pattern templates."""
    try:
        lifted = lift(sentence, domain)
    except GovernorError as exc:
        return Translation(sentence, None, error=f"grounding: {exc}")
    grounding = phrase_grounding(lifted)
    if not lifted.phrases:
        return Translation(
            sentence, None, error="grounding: no place, object or action of the domain found",
            lifted=lifted.text,
        )  # fmt: skip
    try:
        found = match_lifted(lifted.text)
        if found is None:
            raise SpecError(f"no template matches the lifted sentence {lifted.text!r}")
        name, formula = found
        grounded = domain.check(substitute(formula, lifted.grounding()))
    except SpecError as exc:
        return Translation(sentence, None, grounding=grounding, error=str(exc), lifted=lifted.text)
    return Translation(
        sentence, grounded, "offline", grounding, name, None, lifted.text, str(formula)
    )


def conjoin(translations: Sequence[Translation]) -> s.Formula:
    """The conjunction of the translations' formulas; an error names any untranslated sentence."""
    failed = [t.sentence for t in translations if t.formula is None]
    if failed:
        raise SpecError(f"expected every sentence translated, found untranslated: {failed}")
    formulas = [t.formula for t in translations if t.formula is not None]
    if not formulas:
        raise SpecError("expected at least one translation, found none")
    return formulas[0] if len(formulas) == 1 else op.And(tuple(formulas))
