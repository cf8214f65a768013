"""A request body's numbers read as the standard library (and a proxy in front) reads them."""

from __future__ import annotations

import json

import pytest

from governor.guard import Reply, ToolCall, policy_from_mapping
from governor.serve.api_errors import ApiError
from governor.serve.schema import parse_json

LONG = [
    b'{"model": "m", "amount": 18446744073709551617}',
    b'{"id": -9223372036854775809, "n": 18446744073709551616}',
    b'{"candidate": {"tool_calls": [{"function": {"name": "pay",'
    b' "arguments": {"to": 98765432109876543210123, "cents": 1}}}]}}',
]


@pytest.mark.parametrize("raw", LONG)
def test_an_integer_past_64_bits_reads_exactly(raw: bytes) -> None:
    """A reader that turns it into a float would judge another number than the client sent
    (18446744073709551617 read as 18446744073709551616.0): the body reads as json.loads reads
    it, each integer an int of the same value."""
    got = parse_json(raw)
    assert got == json.loads(raw)
    assert json.dumps(got, sort_keys=True) == json.dumps(json.loads(raw), sort_keys=True)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 98765432109876543210, "a": 1}',
        b'{"a": 98765432109876543210, "b": {"c": 1, "c": 2}}',
    ],
)
def test_a_key_named_twice_beside_a_long_integer_is_refused(raw: bytes) -> None:
    with pytest.raises(ApiError) as caught:
        parse_json(raw)
    assert caught.value.status == 400 and "each key once" in str(caught.value)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 98765432109876543210, "b": NaN}',
        b'{"a": 98765432109876543210, "b": Infinity}',
        b'{"a": 98765432109876543210, "b": "\\ud800"}',
        b'{"a": 98765432109876543210, "b": "\xff"}',
        b'{"a": 98765432109876543210,}',
    ],
)
def test_a_body_with_a_long_integer_is_refused_as_any_other_malformed_body(raw: bytes) -> None:
    """Reading long integers exactly takes nothing the service refuses otherwise (NaN, a lone
    surrogate, bytes that are not UTF-8)."""
    with pytest.raises(ApiError) as caught:
        parse_json(raw)
    assert caught.value.status == 400


def test_an_account_one_past_the_trusted_one_is_not_read_as_the_trusted_one() -> None:
    """The harm of a float: 18446744073709551617 read as 18446744073709551616.0 equals the
    trusted account 18446744073709551616, so a rule against any other account would admit a
    transfer to the client's account, which the agent then pays exactly."""
    trusted = 2**64
    policy = policy_from_mapping(
        {
            "propositions": {
                "elsewhere": {
                    "tool": "transfer",
                    "where": {"path": "to", "not_equals": trusted},
                }
            }
        }
    )
    raw = (
        b'{"candidate": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",'
        b' "function": {"name": "transfer", "arguments": {"to": 18446744073709551617}}}]}}'
    )
    call = ToolCall.from_dict(parse_json(raw)["candidate"]["tool_calls"][0], "candidate")
    assert call.args() == {"to": trusted + 1}
    labels, _, _ = policy.vocabulary.labels({}, Reply(None, (call,)), ())
    assert labels == {"elsewhere"}


@pytest.mark.parametrize("raw", [b'{"a": NaN}', b'{"a": [Infinity]}', b'{"a": {"b": -Infinity}}'])
@pytest.mark.parametrize("fast", [True, False])
def test_nan_and_infinities_are_refused_with_or_without_orjson(
    raw: bytes, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON has no NaN: orjson refuses it, and so does the standard library's reader that
    stands in for it where orjson is not installed (which would read it as a float)."""
    from governor.serve import schema

    if not fast:
        monkeypatch.setattr(schema, "orjson", None)
    with pytest.raises(ApiError) as caught:
        parse_json(raw)
    assert caught.value.status == 400 and "malformed JSON" in str(caught.value)
    if not fast:
        assert parse_json(b'{"a": 1.5, "b": [1, "NaN"]}') == {"a": 1.5, "b": [1, "NaN"]}
