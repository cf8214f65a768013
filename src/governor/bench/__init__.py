"""The papers' reports that span several worlds, and the offline demo built from them.

``governor bench reguard`` (the ReGuard paper's tables 1 to 4 over driving, commerce and the
backseat driver), ``governor bench ltl-speed``, ``governor bench serve`` (the latency the guard
service adds), and ``governor demo``. Sits on top with the CLI: it may import the worlds and the
runtime library.
"""
