"""The Safety Chip's household: a symbolic VirtualHome simulator for LLM planners and LTL monitors.

Scene graphs, state, actions with preconditions, the labelling function to the Safety Chip's
propositions, tasks and goals (``governor/Household-v0``); planners (simulated and LLM), the
household guard that runs LTL monitors over them, and the Safety Chip benchmark (the paper's
Table I). Imports the runtime library only; no other world.
"""
