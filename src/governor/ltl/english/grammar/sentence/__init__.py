"""The sentence passes of the clause grammar: rewrites of a sentence's cue symbols before its
clauses are read, each one linear sweep (:mod:`~governor.ltl.english.grammar.sentence.passes`
runs them: time frames, anaphora, list references, elided clauses, returns, converses, a
sentence's shape and tails).

Imports nothing of the package but each other; works on lists of symbols only.
"""
