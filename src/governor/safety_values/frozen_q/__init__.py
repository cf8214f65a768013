"""A cheap LLM safety value: a small Q head on the frozen hidden states of a causal LM.

- :mod:`.hidden_states`: :class:`~.hidden_states.HiddenStates`, the frozen model (no adapters, no
  gradients) and the final hidden state of a prompt, cached on disk;
- :mod:`.head`: :class:`~.head.FrozenQ`, the Q head over those states, its settings and
  checkpoints;
- :mod:`.train_head`: transitions collected once, then the head fitted by reach-avoid TD.

The package's ``__init__`` imports nothing. Imports the runtime (the hf backend's helpers, the
config, the errors, usage metering), the LLM value's loading, checkpoint and task parts
(:mod:`governor.safety_values.llm_q`) and the DDQN target; never a world.
"""
