"""Safety value filters (ReGuard), free of any world.

A safety value Q(z, a) is the closest the system will come to failure if it takes a and then
plays safe. The filter (:mod:`.filter`) is the tuple (monitor Q, fallback argmax_a Q, switching rule
"execute iff Q > margin"); learned values come from reach-avoid double DQN (:mod:`.ddqn`, trained
by one loop over the small :class:`~governor.safety_values.tasks.Task` protocol that a world
implements and registers by env name), read states or text (:mod:`.encoders`, :mod:`.text_net`,
:mod:`.text_tokens`), an LLM's logits with LoRA (the package :mod:`.llm_q`), or a small head on an
LLM's frozen hidden states (the package :mod:`.frozen_q`); :mod:`.metrics` holds the
measures (value F1, rollout F1, confusion). Imports the core types, the config and the backends;
never a world.
"""
