"""The cue phrases of a visit's order and repetition said in a whole phrase
(:mod:`governor.ltl.english.phrases.symbols` merges them): a single stop at each place before the next
("with a single stop at each before moving on to the next", "one visit to each": ``STRICT``),
a round that never ends ("without ever finishing", "never calling it done": ``REPEAT``), and
either order said as an alternative ("one after the other or the other way round", "either way
round": ``ANYORDER``).

Imports nothing of the project.
"""

from __future__ import annotations

__all__ = ["ORDERS"]

ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
_ONE = ("a single", "one", "just one", "only one", "exactly one", "a single one")
_STOP = ("stop", "visit", "trip", "pass", "entry")
_AT = ("at", "to", "in", "into", "through")
_EACH = ("each", "each one", "each of them", "every one", "each place", "each stop")
_NEXT = ("", " before moving on", " before moving on to the next", " before moving on to the next one",
         " before going on to the next", " before the next", " before the next one")  # fmt: skip
for _one in _ONE:
    for _stop in _STOP:
        for _at in _AT:
            for _each in _EACH:
                for _next in _NEXT:
                    for _with in ("", "with ", "making "):
                        _key = f"{_with}{_one} {_stop} {_at} {_each}{_next}"
                        ORDERS[tuple(_key.split())] = ("STRICT",)
for _never in ("without ever", "without", "never", "not ever"):
    for _end in ("finishing", "ending", "stopping for good", "quitting", "calling it done",
                 "calling it a day", "being done", "coming to an end"):  # fmt: skip
        ORDERS[tuple(f"{_never} {_end}".split())] = ("REPEAT",)
for _given in ("one after the other", "in this order", "in that order", "in the order given",
               "in the order listed", "as listed", ""):  # fmt: skip
    for _or in ("or the other way round", "or the other way around", "or the reverse",
                "or in reverse", "or in the reverse order", "or the opposite way round"):  # fmt: skip
        ORDERS[tuple(f"{_given} {_or}".split())] = ("ANYORDER",)
for _either in ("either way round", "either way around", "in either sequence", "either direction"):
    ORDERS[tuple(_either.split())] = ("ANYORDER",)
