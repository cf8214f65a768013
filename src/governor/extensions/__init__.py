"""The observer's extensions (the journal paper, section 5.7): lookahead and observer ensembles.

- :mod:`.users`: user models for rollouts: the :class:`~.users.UserModel` protocol, an offline
  stochastic user model (stated dynamics, seeded; not a person and not a model call) and an LLM
  persona through a backend (every call counted);
- :mod:`.lookahead`: :class:`~.lookahead.LookaheadConstraint`, short-horizon rollouts of each
  locally admissible candidate, rejecting one whose rollouts reach an unsafe region (the fourth
  rejection cause, ``lookahead_failure``);
- :mod:`.ensemble`: :class:`~.ensemble.ObserverEnsemble`, several observers judging
  independently, combined by the arbiter's modes, with disagreement and small margins as a risk
  signal for the conservative path, and weights learned from corrections.

Adaptive rigidity and teachable overlays live with the overlays
(:mod:`governor.overlays.rigidity`, :mod:`governor.overlays.teaching`). Everything here is a
:class:`~governor.core.Constraint` or a :class:`~governor.core.Fallback` of the one runtime loop.
Imports the core types, the arbiter, the config, the overlays' dialogue and text helpers and the
backends' message type; nothing of the worlds.
"""
