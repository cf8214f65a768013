"""The policy's ``tools`` section: the tools offered, hidden and run alone."""

from __future__ import annotations

import re

import pytest

from governor.errors import ConfigError
from governor.guard import policy_from_mapping


def test_no_section_allows_every_tool() -> None:
    tools = policy_from_mapping({}).tools
    assert tools.allows("refund") and tools.allows("anything")


def test_offered_then_hidden() -> None:
    tools = policy_from_mapping(
        {"tools": {"offered": ["refund", "lookup"], "hide": ["lookup"]}}
    ).tools
    assert tools.allows("refund")
    assert not tools.allows("lookup")  # hidden though offered
    assert not tools.allows("delete_account")  # not offered


@pytest.mark.parametrize(
    ("section", "where"),
    [
        ({"offered": "refund"}, "tools.offered"),
        ({"hide": [""]}, "tools.hide[0]"),
        ({"show": ["refund"]}, "tools: unknown key(s) show"),
        ("refund", "tools"),
    ],
)
def test_a_bad_section_names_where(section: object, where: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"p.yaml: {where}")):
        policy_from_mapping({"tools": section}, source="p.yaml")
