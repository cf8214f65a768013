"""The Grounded Observer's small-talk world: conversations with and without the observer.

The retrieval responder (an offline stand-in for a chat model that returns stored human turns;
not a model), simulated users (replayed human openings, or an LLM persona), the chat and audit
configuration file, likeness and drift metrics, the small-talk benchmark, and the embedding
speed benchmark run on its conversations (``bench embed-speed``). Imports the runtime library
only; no other world.
"""
