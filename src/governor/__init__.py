"""governor: runtime guardrails for foundation-model agents, built like robot safety controllers.

Importing governor registers the worlds' environments with gymnasium (``governor/Driving-v0``,
``governor/Commerce-v0``, ``governor/Household-v0``) by entry point: no world and no torch is
imported until an environment is made.
"""

from governor.envs import register_envs

__version__ = "0.1.0"

register_envs()
