"""ReGuard's Backseat AI Driver: the AI only advises in free text and a human proxy steers.

The environment and the human proxies (scripted personas, or an LLM), the advisors (a base
stand-in, a safety advisor reading any Q, one that learns its tone, an LLM), the shield, and the
paper's tables 3 and 4. Built on the driving world, the one other world it may import.
"""
