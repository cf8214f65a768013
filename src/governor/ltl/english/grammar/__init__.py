"""The clause grammar of the English translator: a lifted sentence's tokens to a reading of one
pattern family (or a conjunction of clauses).

:mod:`~governor.ltl.english.grammar.normaliser` turns the tokens into cue symbols (numbers in
:mod:`~governor.ltl.english.grammar.numbers`, facts said as reasons in
:mod:`~governor.ltl.english.grammar.facts`); the sentence passes
(:mod:`~governor.ltl.english.grammar.sentence`) rewrite the symbols; the clause rules
(:mod:`~governor.ltl.english.grammar.clause`) read each clause;
:mod:`~governor.ltl.english.grammar.clauses` runs them and
:mod:`~governor.ltl.english.grammar.readings` holds what was understood;
:mod:`~governor.ltl.english.grammar.precision` refuses a reading that leaves the sentence not
accounted for; :mod:`~governor.ltl.english.grammar.commands` reads short navigation commands by
a named convention's table of shapes.

Imports the LTL logic (operators, patterns, syntax), the phrase tables and the lexicon; never the
grounding.
"""
