"""The English translator of the LTL package: natural-language constraints to LTLf formulas and
formulas read back in English, in the Lang2LTL style.

- :mod:`~governor.ltl.english.translate`: the offline translation (ground, lift, read, substitute
  back), its :class:`Translation` and the spec of an accepted one;
  :mod:`~governor.ltl.english.lang2ltl` the same through an LLM, every step validated;
- :mod:`~governor.ltl.english.grounding`: referring expressions grounded to a domain's
  propositions (places, the propositions' own words, events, and a world's verbs through the
  phrase table its :class:`~governor.ltl.domain.Domain` carries);
- :mod:`~governor.ltl.english.grammar`: the clause grammar (the cue normaliser, the sentence
  passes, the clause rules, the readings); :mod:`~governor.ltl.english.phrases`: its phrase
  tables; :mod:`~governor.ltl.english.lexicon`: the word lists and the sentence normalisation;
  :mod:`~governor.ltl.english.templates`: the older household templates it falls back on;
- :mod:`~governor.ltl.english.readback`: formulas read back in English;
  :mod:`~governor.ltl.english.verify`: the verification view a person reads before accepting;
- :mod:`~governor.ltl.english.domain_file`: domains of a user's own vocabulary and domain files.

Imports the LTL logic (:mod:`governor.ltl`), the error tree, the file readers and the backends'
protocol (for the LLM translator); never a world (a world's vocabulary comes in its domain). The
logic never imports this package.
"""

from governor.ltl.english.domain_file import (
    flag_domain,
    load_domain_file,
    read_domain_file,
    user_domain,
)
from governor.ltl.english.grammar.readings import CONVENTIONS, SAFETY_CHIP
from governor.ltl.english.grounding.world_phrases import WorldPhrases
from governor.ltl.english.lang2ltl import translate_all, translate_llm
from governor.ltl.english.readback import english, pattern_of
from governor.ltl.english.translate import (
    Alternative,
    Translation,
    conjoin,
    spec_from,
    substitute,
    translate_offline,
)
from governor.ltl.english.verify import verify_view

__all__ = [
    "CONVENTIONS",
    "SAFETY_CHIP",
    "Alternative",
    "Translation",
    "WorldPhrases",
    "conjoin",
    "english",
    "flag_domain",
    "load_domain_file",
    "pattern_of",
    "read_domain_file",
    "spec_from",
    "substitute",
    "translate_all",
    "translate_llm",
    "translate_offline",
    "user_domain",
    "verify_view",
]
