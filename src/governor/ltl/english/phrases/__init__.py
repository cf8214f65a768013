"""The phrase tables of the cue normaliser: each cue phrase and the symbols it becomes
(:mod:`~governor.ltl.english.phrases.symbols` merges the others), with counts and step bounds,
fillers, time frames, orders, anaphora and time units apart.

Data and small helpers over it; imports nothing of the translator but each other.
"""
