"""ReGuard's Agentic Commerce: keep a shopping cart within budget with a few clicks.

The cart and its page as an accessibility tree (``governor/Commerce-v0``), the exact value by
dynamic programming and its filter, the task adapter for reach-avoid DDQN, scripted shoppers and
the commerce benchmark. Imports the runtime library only; no other world.
"""
