"""The judge every integration shares: check, then commit, a tool call before it runs; fail
closed when a call cannot be judged; results and user turns join the session."""

from __future__ import annotations

import asyncio
from pathlib import Path

from governor.guard import MemoryStore
from governor.integrations.tool_judge import JUDGE_FAILED, TOOLS_RULE, Judges, judging_guard

POLICY = Path(__file__).resolve().parents[2] / "examples" / "policies" / "refunds.yaml"


def test_check_then_commit_and_fail_closed() -> None:
    store = MemoryStore()
    guard = judging_guard(POLICY, store=store)
    judge = Judges(guard)("s")

    async def main() -> list[tuple[bool, tuple[str, ...]]]:
        seen = []
        for tool, args in [
            ("refund", {"customer": "a", "amount": 5}),  # before verify_identity
            ("lookup_order", "not json"),  # arguments that cannot be read
            ("delete_account", {}),  # hidden by the tools section
            ("verify_identity", ""),  # no arguments at all: read as {}
            ("refund", '{"customer": "a", "amount": 5}'),
        ]:
            judgement = await judge.before_call(tool, args)
            seen.append((judgement.allowed, judgement.rules))
            if judgement.allowed:
                await judge.after_call(judgement.call_id, f"{tool} done")
        await judge.hear({"role": "user", "content": "thanks"}, key="m1")
        await judge.hear({"role": "user", "content": "thanks"}, key="m1")  # heard once
        assert (await judge.judge_reply("You are welcome.")).allowed
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        guard.close()
    assert seen == [
        (False, ("verify_before_refund",)),
        (False, (JUDGE_FAILED,)),
        (False, (TOOLS_RULE,)),
        (True, ()),
        (True, ()),
    ]
    saved = store.load("s")
    assert saved is not None
    kept = [
        (m["role"], m.get("content") or m["tool_calls"][0]["function"]["name"])
        for m in saved["messages"]
    ]
    assert kept == [
        ("assistant", "verify_identity"),
        ("tool", "verify_identity done"),
        ("assistant", "refund"),
        ("tool", "refund done"),
        ("user", "thanks"),
        ("assistant", "You are welcome."),
    ]


def test_judges_keep_one_judge_per_session() -> None:
    guard = judging_guard(POLICY)
    try:
        judges = Judges(guard)
        assert judges("a") is judges("a")
        assert judges("a") is not judges("b")
    finally:
        guard.close()
