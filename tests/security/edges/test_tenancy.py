"""Tenancy: a client key owns the sessions it makes and sees no other (docs/security.md).

Each test is an attack made with the official ``openai`` client against ``governor serve`` with
two client keys in front of the scripted upstream."""

from __future__ import annotations

import openai
import pytest
from edge_helpers import ALICE_KEY, BOB_KEY, admin_get, client, owner_prefix
from fake_openai_server import FakeOpenAIServer
from serve_helpers import TOOLS, text, tool_call

CARD = "4111 1111 1111 1111, 12 Elm Street"


def alice_history(base: str, server: FakeOpenAIServer) -> list[dict[str, str]]:
    """Alice's session "support-1": she sent her card and address; one reply committed."""
    server.script("/chat/completions", text("Thanks, noted."))
    said = [{"role": "user", "content": f"My card is {CARD}"}]
    reply = client(base, ALICE_KEY).chat.completions.create(
        model="m", messages=said, metadata={"governor_session": "support-1"}
    )
    return [*said, {"role": "assistant", "content": reply.choices[0].message.content or ""}]


def test_another_key_gets_what_an_unknown_session_gets_and_never_her_messages(
    base: str, server: FakeOpenAIServer
) -> None:
    alice_history(base, server)
    bob = client(base, BOB_KEY)
    wrong = [{"role": "user", "content": "something else"}, {"role": "user", "content": "hi"}]
    server.script("/chat/completions", text("Hello."), text("Hello."))
    on_hers = bob.chat.completions.with_raw_response.create(
        model="m", messages=wrong, metadata={"governor_session": "support-1"}
    )
    on_none = bob.chat.completions.with_raw_response.create(
        model="m", messages=wrong, metadata={"governor_session": "never-used"}
    )
    assert on_hers.status_code == on_none.status_code == 200
    hers, none = on_hers.parse(), on_none.parse()
    assert hers.choices[0].message.content == none.choices[0].message.content == "Hello."
    assert hers.model_extra["governor"]["t"] == none.model_extra["governor"]["t"] == 1
    # no part of her message: not the card (its digits could turn up in a latency), the street
    assert "4111 1111" not in on_hers.http_response.text
    assert "Elm Street" not in on_hers.http_response.text
    # the upstream saw Bob's messages only, never Alice's
    assert all(CARD not in str(r.body) for r in server.requests_to("/chat/completions")[1:])


def test_a_probe_does_not_append_to_her_session(base: str, server: FakeOpenAIServer) -> None:
    history = alice_history(base, server)
    server.script("/chat/completions", text("probe answered"), text("All good."))
    client(base, BOB_KEY).chat.completions.create(
        model="m",
        messages=[*history, {"role": "user", "content": "probe"}],
        metadata={"governor_session": "support-1"},
    )
    theirs = admin_get(base, owner_prefix(ALICE_KEY) + "support-1").json()
    assert theirs["t"] == 1 and len(theirs["messages"]) == 2  # Bob's turn is not in hers
    following = [*history, {"role": "user", "content": "and my order?"}]
    reply = client(base, ALICE_KEY).chat.completions.create(
        model="m", messages=following, metadata={"governor_session": "support-1"}
    )
    assert reply.choices[0].message.content == "All good."


def test_a_commit_by_another_key_does_not_reach_her_session(
    base: str, server: FakeOpenAIServer
) -> None:
    history = alice_history(base, server)
    transfer = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "t1",
                "type": "function",
                "function": {"name": "transfer_funds", "arguments": '{"amount": 90}'},
            }
        ],
    }
    bob = client(base, BOB_KEY)
    body = {"session": "support-1", "candidate": transfer, "commit": True}
    committed = bob.post("/checks", body=body, cast_to=object)
    assert committed["committed"] is True  # type: ignore[index]
    # Alice verifies, then transfers 90: under her own rules (nothing of Bob's counted)
    server.script(
        "/chat/completions",
        tool_call("v1", "verify_identity"),
        tool_call("t2", "transfer_funds", amount=90),
    )
    alice = client(base, ALICE_KEY)
    said = [*history, {"role": "user", "content": "verify me"}]
    first = alice.chat.completions.create(
        model="m", messages=said, metadata={"governor_session": "support-1"}, tools=TOOLS
    )  # type: ignore[arg-type]
    message = first.choices[0].message.model_dump(exclude_none=True)
    said += [message, {"role": "tool", "tool_call_id": "v1", "content": "ok"}]
    second = alice.chat.completions.create(
        model="m", messages=said, metadata={"governor_session": "support-1"}, tools=TOOLS
    )  # type: ignore[arg-type]
    calls = second.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["transfer_funds"]  # 90 alone is under the cap


def test_a_changed_history_names_the_index_and_quotes_nothing(
    base: str, server: FakeOpenAIServer
) -> None:
    history = alice_history(base, server)
    changed = [{"role": "user", "content": "My card is (edited)"}, history[1]]
    with pytest.raises(openai.BadRequestError) as err:
        client(base, ALICE_KEY).chat.completions.create(
            model="m",
            messages=[*changed, {"role": "user", "content": "hi"}],
            metadata={"governor_session": "support-1"},
        )
    message = err.value.body["message"]  # type: ignore[index]
    assert "messages[0]" in message and "cannot change" in message
    assert "4111" not in str(err.value.response.text) and "Thanks" not in message


def test_the_admin_sees_every_keys_sessions(base: str, server: FakeOpenAIServer) -> None:
    alice_history(base, server)
    server.script("/chat/completions", text("Hi Bob."))
    client(base, BOB_KEY).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hello"}],
        metadata={"governor_session": "support-1"},
    )
    hers = admin_get(base, owner_prefix(ALICE_KEY) + "support-1").json()
    his = admin_get(base, owner_prefix(BOB_KEY) + "support-1").json()
    assert CARD in hers["messages"][0]["content"]
    assert his["messages"][0]["content"] == "hello"
