"""ReGuard's Agentic Driving: a car at constant speed steered right, straight or left.

The environment (:mod:`.env`, ``governor/Driving-v0``), the exact grid safety value and the exact
search over action sequences, the controllers (goal-seeking, erratic, LLM), the one-step baselines,
the zero-shot guard, the task adapter for reach-avoid DDQN, and the driving benchmarks (``governor
bench driving`` and the driving tables of ``governor bench reguard``). Imports the runtime library
only; no other world.
"""
