"""The observer's extensions (the journal paper, sections 5.5 and 5.7): constraints and fallbacks
that extend what one observer judges.

- :mod:`.crisis_cues`: lexical cues of a support conversation's turns (intent, hopelessness,
  low mood, support, dismissal, a crisis-protocol offer), read by the user models and the
  crisis checks;
- :mod:`.users`: user models for rollouts: the :class:`~.users.UserModel` protocol, an offline
  stochastic user model (stated dynamics, seeded; not a person and not a model call) and an LLM
  persona through a backend (every call counted);
- :mod:`.lookahead`: :class:`~.lookahead.LookaheadConstraint`, short-horizon rollouts of each
  locally admissible candidate, rejecting one whose rollouts reach an unsafe region (the fourth
  rejection cause, ``lookahead_failure``);
- :mod:`.ensemble`: :class:`~.ensemble.ObserverEnsemble`, several observers judging
  independently, combined by the arbiter's modes, with disagreement and small margins as a risk
  signal for the conservative path, and weights learned from corrections;
- :mod:`.teaching`: teachable overlays, user feedback as session-scoped overlay updates (safety
  rules protected);
- :mod:`.fallible`: the fallible mode of a tutoring agent.

Adaptive rigidity is an option of the overlay rule format (``margin``), read by the overlay
loader, so it lives with the overlays (:mod:`governor.overlays.rigidity`): the overlays never
import this package. Everything here is a :class:`~governor.core.Constraint` or a
:class:`~governor.core.Fallback` of the one runtime loop. Imports the core types, the arbiter,
the config, the errors, the overlays (rules, constraint, dialogue helpers) and the backends'
message type; nothing of the worlds, the guard or the CLI.
"""
