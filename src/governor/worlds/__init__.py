"""The worlds of the papers, one folder a world, above the runtime library.

Each world holds its environment, its exact values, its agents, the adapters its families' protocols
ask for (a driving task for reach-avoid DDQN, a household :class:`~governor.ltl.domain.Domain` for
translation) and its benchmark: :mod:`~governor.worlds.driving` and :mod:`~governor.worlds.commerce`
(ReGuard), :mod:`~governor.worlds.backseat` (ReGuard's backseat driver, on driving),
:mod:`~governor.worlds.household` (the Safety Chip), :mod:`~governor.worlds.smalltalk` (the Grounded
Observer), :mod:`~governor.worlds.scenarios` (the journal Grounded Observer paper's supervision
scenarios: de-escalation, in-home training, tutoring, crisis, ensembles; ``bench supervision``). A world imports the runtime library freely and another world only where declared
(backseat imports driving); the runtime library never imports a world.
"""
