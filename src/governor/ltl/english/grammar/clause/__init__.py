"""The clause rules of the clause grammar: a clause's cue symbols cleaned to a template string
(:mod:`~governor.ltl.english.grammar.clause.clean`) and matched, in order of priority, against
the rules of reactions, visits and avoidance; :mod:`~governor.ltl.english.grammar.clause.kit`
holds the rule registry they share.

Imports the readings of the grammar and the LTL logic only.
"""
