"""Strict JSON text: orjson's speed, the standard library's strictness (with and without orjson)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import random
import re
import struct
import uuid
from typing import Any

import pytest
from guard_helpers import Conversation, call, tool_guard

import governor.jsontext as jt
from governor.guard import MemoryStore, StoreError


@dataclasses.dataclass
class _Point:
    x: int = 1


class _Colour(enum.Enum):
    RED = 1


class _Named(enum.StrEnum):
    A = "a"


def _nested(depth: int) -> list[Any]:
    value: list[Any] = [1]
    for _ in range(depth):
        value = [value]
    return value


REFUSED = [
    math.nan,
    {"a": math.inf},
    [1, -math.inf],
    ((0.5, -math.nan),),
    [math.inf, math.inf, {"again": math.inf}],  # one float object met three times
    [-1, {"x": [-129, math.nan]}],
    _Point(),
    {"p": [_Point()]},
    _Colour.RED,
    datetime.datetime(2024, 1, 2, 3, 4, 5),
    datetime.date(2024, 1, 2),
    uuid.UUID(int=7),
    {1: "a", "b": 2},  # keys that cannot be sorted
    object(),
    b"bytes",
]


class _Odd(int, enum.Enum):
    """An int enum whose value is not its number (orjson writes the value, json the number)."""

    A = 1

    def __new__(cls, n: int) -> _Odd:
        member = int.__new__(cls, n)
        member._value_ = "one"
        return member


class _Text(str):
    pass


class _Half(float, enum.Enum):
    A = 0.5


WRITTEN = [
    {"b": 1, "a": [1.5, -0.0, 1e-7, 1e300, True, False, None, "x"]},
    {"n": [-1, -129, -(2**63), 2**64 - 1, 255, 0x7FF0], "f": [-1e308, 5e-324, -2.5]},
    {"odd": _Odd.A, "int": enum.IntEnum("N", "A").A, "half": _Half.A, "t": _Text("k")},
    {_Text("key"): 1, "tuple": (1.5, ("x",)), "del": "\x7f\xff\U0001f600"},
    {"é": "ü\u2028\x00", "nested": {"z": {"y": [[], {}]}}},
    (1, (2, [3])),  # tuples are arrays
    {1: "a", 2: "b", 10: "c"},  # keys the standard library turns into text
    2**70,  # past orjson's 64 bits
    _Named.A,
    "\ud800",  # a lone surrogate: orjson refuses it, the standard library escapes it
    _nested(300),  # deeper than orjson writes
]


@pytest.fixture(params=["orjson", "stdlib"])
def writer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "orjson":
        assert jt.orjson is not None, "the [serve] extra's orjson is expected in the test env"
    else:
        monkeypatch.setattr(jt, "orjson", None)
    return str(request.param)


def _error(call: Any, value: Any) -> type[BaseException] | None:
    try:
        call(value)
    except (TypeError, ValueError) as exc:
        return type(exc)
    return None


@pytest.mark.parametrize("value", REFUSED, ids=lambda v: type(v).__name__)
def test_a_value_the_standard_library_refuses_raises_the_same_error(
    writer: str, value: Any
) -> None:
    strict = _error(lambda v: json.dumps(v, sort_keys=True, allow_nan=False), value)
    assert strict is not None
    assert _error(jt.sorted_text, value) is strict
    compact = _error(lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False), value)
    if compact is not None:  # unsortable keys are fine unsorted
        assert _error(jt.compact_bytes, value) is compact


@pytest.mark.parametrize("value", WRITTEN, ids=lambda v: type(v).__name__)
def test_a_value_the_standard_library_writes_reads_back_as_it_does(writer: str, value: Any) -> None:
    want = json.loads(json.dumps(value, sort_keys=True, allow_nan=False))
    text = jt.sorted_text(value)
    assert json.loads(text) == want
    if isinstance(value, dict) and all(type(k) is str for k in value):
        assert list(json.loads(text)) == sorted(value)  # keys sorted
    if value != "\ud800":  # no UTF-8 for a lone surrogate (as before: UnicodeEncodeError)
        assert json.loads(jt.compact_bytes(value)) == want
    assert jt.is_json(value)


def test_nan_passes_the_loose_check_only(writer: str) -> None:
    assert jt.is_json({"t": math.nan})  # as json.dumps (allow_nan) takes it
    assert not jt.is_json({"t": _Point()})
    assert not jt.is_json({"t": uuid.UUID(int=1)})


def test_the_digest_text_is_stable_and_takes_anything(writer: str) -> None:
    a = jt.digest_text([{"b": 1, "a": _Point(), "c": math.nan}, 0.7, 2**70])
    b = jt.digest_text([{"a": _Point(), "c": math.nan, "b": 1}, 0.7, 2**70])
    assert a == b
    odd = [{"b": 1, 3: uuid.UUID(int=1)}, 2**70]  # keys that do not sort together
    assert jt.digest_text(odd) == jt.digest_text(odd)
    assert jt.digest_text([{"a": 1}]) != jt.digest_text([{"a": 2}])


@pytest.mark.parametrize(
    "value",
    [
        [{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": [1.5]}}}],
        {"é": "ü\u2028", "z": None, "a": [True, -0.0, 1e300, 2**63 - 1]},
        [_Point(), _Colour.RED, _Named.A, uuid.UUID(int=7), datetime.date(2024, 1, 2)],
        {"a": {"b": math.nan, "c": math.inf}},
    ],
    ids=["tools", "text and numbers", "objects orjson writes", "non-finite"],
)
def test_the_digest_text_of_string_keys_is_the_full_writers(value: Any) -> None:
    """The quick first write (no default, string keys only) gives the full writer's bytes."""
    assert jt.orjson is not None
    full = jt.orjson.dumps(value, default=str, option=jt._DIGEST)
    assert jt.digest_text(value) == full


def test_real_states_and_records_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each state and record is shown plain by marshal's walk, never read back."""
    taken: list[bool] = []
    plain = jt._plain

    def spy(value: Any) -> bool:
        taken.append(plain(value))
        return taken[-1]

    def unexpected(value: Any, option: int) -> bytes | None:
        raise AssertionError(f"read back: {value!r}")

    monkeypatch.setattr(jt, "_plain", spy)
    monkeypatch.setattr(jt, "_fast", unexpected)
    store = MemoryStore()
    guard, _ = tool_guard(
        [call("read_secret", key="k"), call("send_email", to="x"), "I won't."], store=store
    )
    session, chat = guard.session("a"), Conversation()
    chat.took(session.respond_sync(chat.user("read the secret")))
    chat.took(session.respond_sync(chat.user("mail it")))
    assert len(taken) >= 4 and all(taken)  # each state and decision record
    assert [r["t"] for r in store.records("a")] == [1, 2]


@pytest.mark.parametrize("bad", [math.nan, math.inf, _Point(), {1: 1, "a": 2}])
def test_a_store_refuses_a_state_that_is_not_json(writer: str, bad: Any) -> None:
    store = MemoryStore()
    with pytest.raises(StoreError, match="expected JSON-safe state"):
        store.save("s", {"t": 1, "memory": {"r": bad}}, None)
    with pytest.raises(StoreError, match="expected JSON-safe state"):
        store.save("s", {"t": 1}, {"latency": bad})
    assert store.load("s") is None


def _random_tree(rng: Any, depth: int = 0) -> Any:
    """A random value of JSON's types, tuples too, with floats of any 64 bits (NaNs and
    infinities among them) and ints of either sign."""
    pick = rng.randrange(9 if depth < 4 else 5)
    if pick == 0:
        return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    if pick == 1:
        return rng.choice([math.inf, -math.inf, math.nan, 0.1, -2.5, 1e308])
    if pick == 2:
        return rng.randrange(-(2**63), 2**64)
    if pick == 3:
        return "".join(chr(rng.choice([0x41, 0x7F, 0xE9, 0xFF, 0x2028, 0x1F600])) for _ in "abc")
    if pick == 4:
        return rng.choice([None, True, False])
    items = [_random_tree(rng, depth + 1) for _ in range(rng.randrange(4))]
    if pick in (5, 6):
        return {f"k{i}\x7f": v for i, v in enumerate(items)}
    return items if pick == 7 else tuple(items)


def test_random_values_are_written_or_refused_as_the_standard_library_does() -> None:
    """orjson's text, kept without a reading back when marshal's walk shows a value plain,
    reads as the standard library's text; a value holding a NaN or an infinity is never shown
    plain, and is refused."""
    rng = random.Random(7)
    for k in range(3000):
        value = _random_tree(rng)
        try:
            want = json.loads(json.dumps(value, sort_keys=True, allow_nan=False))
        except ValueError:
            want = ValueError
        if want is ValueError:
            assert not jt._plain(value), k
            assert _error(jt.sorted_text, value) is ValueError, k
            assert _error(jt.compact_bytes, value) is ValueError, k
        else:
            assert json.loads(jt.sorted_text(value)) == want, k
            assert json.loads(jt.compact_bytes(value)) == want, k


def test_marshal_s_walk_shows_a_float_plain_exactly_when_it_is_finite() -> None:
    """Only a non-finite float's own last two bytes count: a finite float, an int or a length
    whose bytes hold F0-FF then 7F or FF elsewhere leaves a value plain (a state or record whose
    latencies happened to hold such bytes was read back for nothing)."""
    rng = random.Random(11)
    for _ in range(20_000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        assert jt._plain([x, {"t": x}]) is math.isfinite(x), x.hex()
    # finite floats and ints whose bytes hold the pair away from a float's exponent
    look_alike = struct.unpack("<d", b"\xf0\x7f\xf3\xff\x00\x00\x10\x40")[0]
    assert math.isfinite(look_alike)
    assert jt._plain([look_alike, -1, -(2**40), "x" * 0x7FF0, 1.0])
    assert not jt._plain([-1, 1.0, math.inf]) and not jt._plain({"a": [math.nan]})


READ_AS_THE_STANDARD_LIBRARY = [
    b'{"usage": {"prompt_tokens": 20, "completion_tokens": 16}, "model": "m"}',
    b'{"n": 123456789012345678901234567890}',  # past 64 bits: an int, never a float
    b"[-9223372036854775809, 18446744073709551615, 9223372036854775807]",
    b'{"a": 1, "b": 2, "a": 3}',  # a repeated key: the last value, the first place
    b"[NaN, Infinity, -Infinity, 1e400]",  # orjson refuses these; json.loads reads them
    b'"\\ud800"',  # a lone surrogate escape
    b"\xef\xbb\xbf{}",  # a byte order mark
    b'{"x": -0.0, "y": 0.1e1, "z": "\\u00e9\\n"}',
    b"[" * 900 + b"1" + b"]" * 900,  # deeper than orjson reads, within json.loads' reach
]


@pytest.mark.parametrize("raw", READ_AS_THE_STANDARD_LIBRARY)
def test_read_json_reads_what_json_loads_reads(writer: str, raw: bytes) -> None:
    got, want = jt.read_json(raw), json.loads(raw)
    assert repr(got) == repr(want)  # the same values of the same types (nan included)


@pytest.mark.parametrize(
    "raw", [b"", b"{", b'{"a": 1} x', b'"\t"', b"\xff", b"[01]", b"[" * 100_000, b"{'a': 1}"]
)
def test_read_json_refuses_what_json_loads_refuses(writer: str, raw: bytes) -> None:
    with pytest.raises(ValueError):
        jt.read_json(raw)


def _reference(text: str) -> Any:
    """What the standard library's reader with a check on every object gives (or raises)."""
    try:
        return ("value", repr(jt._KEYS_ONCE.decode(text)))
    except jt.DuplicateKeyError as exc:
        return ("twice", exc.key)
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc).__name__)


def _read(text: str) -> Any:
    try:
        return ("value", repr(jt.read_keys_once(text)))
    except jt.DuplicateKeyError as exc:
        return ("twice", exc.key)
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc).__name__)


KEYS_ONCE_OR_NOT = [
    '{"a": 1, "b": {"c": [1, {"d": "x"}]}}',
    '{"a": 1, "a": 2}',
    '{"a": {"b": 1, "b": 1}}',
    '[{"k": "v"}, {"k": "v", "k": "w"}]',
    '{"a": "time: 10:30", "b": "http://x"}',  # colons in strings: counted on both sides
    '{"a": "x", "a": "y:z"}',  # the dropped value held a colon
    '{"a:b": 1, "a:b": 2}',  # the key named twice holds a colon
    '{"a": 1, "b\\u003a": 2}',  # an escaped colon: left to the full reader
    '{"a": "\\u003A", "a": 1}',  # an escaped colon beside a key named twice
    '{"a\\u0022": 1, "a\\"": 2}',  # the same key written two ways
    '{"é": 1, "\\u00e9": 2}',
    '{"n": 123456789012345678901234567890, "n": 1}',  # past 64 bits: the standard library's
    '{"x": NaN, "x": 1}',  # orjson refuses NaN: the standard library decides
    '{"x": [' + "[" * 300 + "]" * 300 + '], "x": 1}',  # deeper than orjson writes
    '{"x": [' + "[" * 300 + "]" * 300 + "]}",
    '{"a": 1,}',
    "",
]


@pytest.mark.parametrize("text", KEYS_ONCE_OR_NOT)
def test_read_keys_once_reads_and_refuses_what_the_checked_reader_does(
    writer: str, text: str
) -> None:
    assert _read(text) == _reference(text)


def test_keys_shown_once_never_shows_a_text_with_a_key_named_twice() -> None:
    """Random objects, some with a key named twice at some depth, colons in keys and values
    (some escaped): whenever orjson's reading shows each key once, the full reader agrees, and
    read_keys_once gives the same value or error as the full reader."""
    import random

    rng = random.Random(20260411)
    pieces = ["a", "b", ":", "\\u003a", "\\u003A", "é", "x:y", "\\\\u003a", " "]

    def text_of(depth: int) -> str:
        kind = rng.random()
        if depth > 3 or kind < 0.3:
            return '"' + "".join(rng.choices(pieces, k=rng.randint(0, 3))) + '"'
        if kind < 0.45:
            return "[" + ", ".join(text_of(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        keys = ['"' + "".join(rng.choices(pieces, k=rng.randint(1, 2))) + '"' for _ in range(3)]
        chosen = [rng.choice(keys) for _ in range(rng.randint(0, 4))]
        return "{" + ", ".join(f"{k}: {text_of(depth + 1)}" for k in chosen) + "}"

    shown = twice = 0
    for _ in range(3000):
        text = text_of(0)
        want = _reference(text)
        if want[0] == "error":
            continue
        twice += want[0] == "twice"
        assert _read(text) == want, text
        if jt.keys_shown_once(text, jt.orjson.loads(text)):
            shown += 1
            assert want[0] == "value", text
            assert jt.keys_shown_once(text.encode(), jt.orjson.loads(text))
    assert shown > 500 and twice > 300  # both kinds were met often


def test_long_digits_finds_a_run_of_19_digits_exactly_where_a_pattern_does() -> None:
    rng = random.Random(7)
    pattern = re.compile(rb"[0-9]{19}")
    for _ in range(3000):
        raw = bytes(rng.choice(b"0123456789:a\xd9\x80") for _ in range(rng.randint(0, 60)))
        assert jt.long_digits(raw) == bool(pattern.search(raw)), raw
    assert jt.long_digits(b'{"n": 1234567890123456789}')
    arabic_indic = "\u0661".encode() * 30  # digits to str.isdigit, not to JSON
    assert not jt.long_digits(b'{"n": 123456789012345678, "m": "' + arabic_indic + b'"}')
