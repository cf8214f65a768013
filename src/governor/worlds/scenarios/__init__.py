"""The journal Grounded Observer paper's supervision scenarios: its supervised deployments, as
seeded simulations.

De-escalation in schools (RESET-like), in-home training, tutoring under adaptive rigidity, crisis
detection by lookahead, and observer ensembles: simulated users with stated dynamics (offline,
stochastic, seeded; an LLM persona through a backend when configured), the supervisor and
observers of the runtime library in front of them, and ``governor bench supervision``, which runs
each mechanism against its ablation on the same seeded users. Imports the runtime library only; no
other world.
"""
