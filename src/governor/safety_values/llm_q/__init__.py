"""The LLM-backbone safety value (ReGuard section 4): a LoRA-adapted causal LM whose next-token
logits are read as Q-values, trained by token-level reach-avoid DDQN.

- :mod:`.value`: :class:`~.value.LLMQ`, the value itself (Q of the answer letters, the action set
  V', value-guided decoding, save and load);
- :mod:`.model`: its settings and how the model is loaded (local files only);
- :mod:`.decode`: V' = top-p(softmax(Q_b)) and value-guided decoding (eq. 4);
- :mod:`.checkpoint`: the LoRA adapter and meta.json of a checkpoint;
- :mod:`.task`: what the value reads of a task (:class:`~.task.LLMTask`);
- :mod:`.transitions`: token transitions, their targets and the TD loss;
- :mod:`.train`: the training loop (and a recipe);
- :mod:`.evaluate`: the metrics against the exact value.

The package's ``__init__`` imports nothing: importing a part loads only what that part needs.
Imports the runtime (the hf backend's helpers, the config, the errors, usage metering, the DDQN
target and training helpers of :mod:`governor.safety_values`); never a world: the task is handed
in.
"""
