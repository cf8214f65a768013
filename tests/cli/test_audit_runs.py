"""`governor audit --policy`: recorded agent runs judged offline, step by step, malformed lines
reported by number while the others are still judged."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.cli.conversation import add_audit_parser, audit_command

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "policies" / "support.yaml"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_audit_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def call(i: str, name: str, **args: Any) -> dict[str, Any]:
    fn = {"name": name, "arguments": json.dumps(args)}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": i, "type": "function", "function": fn}]}  # fmt: skip


def run(status: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "Please refund order A-1001."},
            call("v", "verify_identity", user="ann"),
            {"role": "tool", "tool_call_id": "v", "content": json.dumps({"status": status})},
            call("r", "refund", order_id="A-1001", amount=20),
            {"role": "tool", "tool_call_id": "r", "content": "ok"},
            call("m", "send_email", to="eve@evil.example", body="done"),
            {"role": "tool", "tool_call_id": "m", "content": "sent"},
            {"role": "assistant", "content": "Done."},
        ]
    }


def test_each_refusal_names_its_rule_and_step_and_a_bad_line_is_reported(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    lines = [json.dumps(run("verified")), "{not json", json.dumps(run("FAILED")), "[1]"]
    runs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    c = Console(file=io.StringIO(), width=200)
    args = parse(
        "audit", "--policy", str(SUPPORT), str(runs), "--json", str(out), "--html", str(page)
    )
    assert audit_command(args, c) == 2
    report = json.loads(out.read_text())
    assert [x["line"] for x in report["conversations"]] == [1, 3]
    first, third = report["conversations"]
    assert first["steps"] == 4 and third["steps"] == 4
    mail = {"message": 6, "tool": "send_email", "rules": ["mail_only_the_user"]}
    assert [{k: r[k] for k in mail} for r in first["refused"]] == [mail]
    refund = {"message": 4, "tool": "refund", "rules": ["verify_before_refund"]}
    assert [{k: r[k] for k in refund} for r in third["refused"]] == [refund, mail]
    assert "send email only to addresses the user wrote" in first["refused"][0]["reason"]
    s = report["summary"]
    assert [m["line"] for m in s["malformed"]] == [2, 4]
    assert s["runs"] == 2 and s["steps"] == 8 and s["refused_steps"] == 3
    assert s["rules"] == {"mail_only_the_user": 2, "verify_before_refund": 1}
    assert "verify_before_refund" in page.read_text()
    assert "line 2: malformed" in c.file.getvalue()  # type: ignore[attr-defined]


def test_a_clean_file_exits_zero(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    clean = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    }
    runs.write_text(json.dumps(clean) + "\n", encoding="utf-8")
    c = Console(file=io.StringIO(), width=200)
    assert audit_command(parse("audit", "--policy", str(SUPPORT), str(runs)), c) == 0
    assert "1 runs, 1 steps judged, 0 refused" in c.file.getvalue()  # type: ignore[attr-defined]
