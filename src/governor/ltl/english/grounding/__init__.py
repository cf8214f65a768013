"""Offline grounding of the English translator: referring expressions found by rule, grounded to
a domain's propositions and lifted to placeholders (:mod:`~governor.ltl.english.grounding.lift`).

Objects and places by the word scanner, bare propositions by their own words (mentions) or as
events said in other words (events, event references, event words), errands and asides read
before; a world's verbs and described states by the phrase table its domain carries
(:mod:`~governor.ltl.english.grounding.world_phrases`). Misspelled domain words are corrected,
and named, before all of it (:mod:`~governor.ltl.english.grounding.spelling`).

Imports the LTL logic (domain, syntax, operators, parser), the lexicon and the phrase tables;
never the clause grammar and never a world.
"""
