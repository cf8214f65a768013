"""Strict JSON text, written fast: orjson when it is installed (the ``[serve]`` extra brings it),
the standard library otherwise, with the standard library's strictness either way.

:func:`sorted_text` is ``json.dumps(value, sort_keys=True, allow_nan=False)`` and
:func:`compact_bytes` the compact UTF-8 of ``json.dumps(value, ensure_ascii=False,
allow_nan=False)``: each raises the ``TypeError`` or ``ValueError`` the standard library raises
for a value it refuses (NaN, infinities, objects such as dataclasses, enums, datetimes). orjson
writes some of those where the standard library refuses them (NaN as ``null``, dataclasses,
datetimes, UUIDs, enums), so its text is kept only when it provably holds what the standard
library writes: when the value is made of exact dicts with string keys, lists, tuples, strings,
ints, bools, None and finite floats (:func:`_plain`: marshal's C walk, no parse), or else when it
reads back equal to the value (one C parse and one C comparison); any other value (a refused
one, a non-string key, an integer past 64 bits, nesting orjson does not take) is written by the
standard library, which raises or gives the text (:func:`exact_bytes`: orjson's text when it
reads back equal, or None). :func:`read_json` reads JSON text as ``json.loads`` does, with orjson
where it reads the same value. :func:`read_keys_once` reads it refusing an object that names a key twice (:func:`keys_shown_once`: orjson's reading shows it without a second read). :func:`digest_text` is a stable text for hashing any value.
Imports the standard library only.
"""

from __future__ import annotations

import json
import marshal
import re
from typing import Any

try:  # the [serve] extra's fast JSON; the standard library's writer otherwise
    import orjson
except ImportError:  # pragma: no cover - orjson is part of the [serve] extra
    orjson = None  # type: ignore[assignment]

_SORTED = json.JSONEncoder(sort_keys=True, allow_nan=False)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

if orjson is not None:
    _PASS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    _SORT = _PASS | orjson.OPT_SORT_KEYS
    _DIGEST = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
    _SORTED_ONLY = orjson.OPT_SORT_KEYS


def _fast(value: Any, option: int) -> bytes | None:
    """orjson's text of ``value`` when it reads back equal to ``value``; else None."""
    try:
        out = orjson.dumps(value, option=option)
        return out if orjson.loads(out) == value else None
    except Exception:  # refused (TypeError) or compared with an odd object: the slow path
        return None


def _strict(value: Any, option: int) -> bytes | None:
    """orjson's text of ``value`` when it holds what the standard library writes (the same
    value, arrays for tuples): proven by :func:`_plain` without reading it back, else by
    :func:`_fast`'s reading; None when neither shows it."""
    try:
        # subclasses of str, int, dict and list refused (orjson would write them as their base)
        out = orjson.dumps(value, option=option | orjson.OPT_PASSTHROUGH_SUBCLASS)
        plain = _plain(value)
    except Exception:  # refused by orjson or marshal: an enum, a UUID, a subclass, ...
        return _fast(value, option)
    if plain:
        return out
    try:  # a float that may not be finite: orjson wrote it as null
        return out if orjson.loads(out) == value else None
    except Exception:
        return None


def _plain(value: Any) -> bool:
    """Whether ``value``, which orjson writes with subclasses refused, is made of exact builtin
    types and holds no NaN or infinity; raises ValueError for a type marshal does not write.

    marshal (format 4) writes objects of exact builtin types only: a subclass, an enum, a UUID
    or an ``orjson.Fragment`` (which orjson writes as something else) is refused, and what
    else marshal takes (bytes, sets, complex numbers, code, numpy values) orjson refuses; so
    what both write is exact dicts, lists, tuples, strings, ints, bools, None and floats.
    marshal writes each float once as its 8 IEEE 754 bytes, least significant first; those of
    a NaN or an infinity end in a byte of F0-FF and then 7F or FF, which UTF-8 text never
    holds, 8 bytes after the float's type byte (``g``, or ``0xE7`` with marshal's reference
    flag). When no 7F or FF byte follows one of F0-FF with such a type byte 8 bytes before,
    every float is finite; where one does (a finite float's or an int's bytes may look so) the
    answer is False, never wrongly True."""
    data = marshal.dumps(value, 4)
    for last in (0x7F, 0xFF):
        at = data.find(last, 8)
        while at != -1:
            if data[at - 1] >= 0xF0 and data[at - 8] in _FLOAT_TYPES:
                return False
            at = data.find(last, at + 1)
    return True


_FLOAT_TYPES = frozenset((0x67, 0x67 | 0x80))
"""marshal's type byte of a float written as 8 bytes (``g``), without and with its reference
flag."""


def sorted_text(value: Any) -> str:
    """JSON text of ``value`` with sorted keys (compact and UTF-8 when orjson writes it); raises
    what ``json.dumps(value, sort_keys=True, allow_nan=False)`` raises."""
    if orjson is not None:
        out = _strict(value, _SORT)
        if out is not None:
            return out.decode("utf-8")
    return _SORTED.encode(value)


def compact_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``, keys in their order; raises what ``json.dumps(value,
    ensure_ascii=False, allow_nan=False)`` raises."""
    if orjson is not None:
        out = _strict(value, _PASS)
        if out is not None:
            return out
    return _COMPACT.encode(value).encode("utf-8")


def exact_bytes(value: Any) -> bytes | None:
    """:func:`compact_bytes` of ``value`` when orjson writes it and it reads back equal (the
    text holds exactly the value, nothing written as something else); None otherwise, or
    without orjson."""
    return _fast(value, _PASS) if orjson is not None else None


def is_json(value: Any) -> bool:
    """Whether ``json.dumps(value)`` writes ``value`` (NaN and infinities allowed, as there)."""
    if orjson is not None and _fast(value, _PASS) is not None:
        return True
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
"""A byte table turning every digit into ``0`` and every other byte into a space."""
_RUN = b"0" * 19


def long_digits(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of 19 ASCII digits: as long as an integer orjson may read past
    64 bits (as a float, where the standard library reads an ``int``). One C pass turning the
    digits into zeros and one substring search (a regular expression takes several times as
    long)."""
    return _RUN in raw.translate(_ZEROS)


def read_json(raw: bytes) -> Any:
    """The value ``json.loads(raw)`` reads, nesting too deep a :class:`json.JSONDecodeError`
    like any other malformed text. orjson reads it when it can and no run of 19 digits is in
    ``raw`` (so no integer past 64 bits, which orjson would read as a float): then both read the
    same value. What orjson refuses (``NaN``, infinities, a lone surrogate escape, a byte order
    mark, nesting past 1,024 levels) goes to the standard library, which reads or refuses it as
    ever. (Nesting is the one bound that differs: orjson reads up to 1,024 levels, the standard
    library as deep as the caller's stack leaves it, under 1,000.)"""
    if orjson is not None and not long_digits(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(raw)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice, raised while :func:`read_keys_once` reads it;
    ``key`` is that key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key[:64]!r} appears twice")
        self.key = key


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return out


_KEYS_ONCE = json.JSONDecoder(object_pairs_hook=_keys_once)
"""The standard library's reader with :func:`_keys_once` on every object (built once:
``json.loads`` with a hook builds a reader per call)."""


_COLON_ESCAPE = re.compile(r"\\u003[aA]").search
_COLON_ESCAPE_BYTES = re.compile(rb"\\u003[aA]").search


def keys_shown_once(text: str | bytes, value: Any) -> bool:
    """Whether ``value``, what orjson read from the JSON ``text``, shows that no object in
    ``text`` names a key twice; False when it does not show it (then :func:`read_keys_once`
    decides). Counted in C, without reading ``text`` again: every ``:`` in ``text`` outside a
    string separates a key from its value, and orjson writes ``value`` with one ``:`` per key
    of each object and the ``:`` of its strings, nothing else. A key named twice keeps one key
    (and drops one value, its colons with it), so ``value`` written holds fewer colons than
    ``text``; equal counts prove each key once. A colon written as an escape (``\\u003a``) is
    one the count of ``text`` misses: such a text is not shown (nor one orjson does not write:
    nesting past 254 levels, so a value shown is one the standard library reads too)."""
    if orjson is None:
        return False
    try:
        written = orjson.dumps(value)
    except Exception:  # nesting orjson does not write (past 254 levels): not shown
        return False
    if isinstance(text, bytes):
        return text.count(b":") == written.count(b":") and not _COLON_ESCAPE_BYTES(text)
    return text.count(":") == written.count(b":") and not _COLON_ESCAPE(text)


def read_keys_once(text: str) -> Any:
    """The value ``json.loads(text)`` reads, a :class:`DuplicateKeyError` when an object in it
    names a key twice (readers disagree on which value counts: the first, the last, an error;
    the standard reader keeps the last, so ``{"amount": 500, "amount": 10}`` would read as 10
    while another reader sees 500). Malformed text: :class:`json.JSONDecodeError`; nesting past
    the stack: :class:`RecursionError`. orjson reads it when it can, without a run of 19 digits
    (as :func:`read_json`) and with each key shown once (:func:`keys_shown_once`); any other
    text is read by the standard library with a check on every object."""
    if orjson is not None and not long_digits(text.encode("utf-8", "surrogatepass")):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the standard library refuses it too, or reads what orjson refuses (NaN)
        else:
            if keys_shown_once(text, value):
                return value
    return _KEYS_ONCE.decode(text)


def digest_text(value: Any) -> bytes:
    """A stable text of any ``value`` for hashing (keys sorted where they sort; what JSON cannot
    hold, as ``str``); the same value gives the same bytes in every process of one
    installation. Never raises but for nesting too deep for the standard library."""
    if orjson is not None:
        try:  # string keys and what orjson writes (most values): the same text, sooner
            return orjson.dumps(value, option=_SORTED_ONLY)
        except TypeError:
            pass
        try:
            return orjson.dumps(value, default=str, option=_DIGEST)
        except Exception:  # e.g. an integer past 64 bits, nesting orjson does not take
            pass
    try:
        return json.dumps(value, sort_keys=True, default=str).encode("utf-8")
    except TypeError:  # keys of types that do not sort together: in their order
        return json.dumps(value, default=str).encode("utf-8")
