"""The conversation commands: chat with scripted input, audit, calibrate, config validation."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from smalltalk_helpers import words

from governor.backends.scripted import ScriptedBackend
from governor.cli.conversation import (
    add_audit_parser,
    add_calibrate_parser,
    add_chat_parser,
    audit_command,
    calibrate_command,
    chat_command,
)
from governor.config import BackendConfig
from governor.errors import ConfigError, GovernorError
from governor.trace import read_trace
from governor.worlds.smalltalk.audit import read_transcript
from governor.worlds.smalltalk.settings import load_settings

LONG = " ".join(["word"] * 150)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (add_chat_parser, add_audit_parser, add_calibrate_parser):
        add(sub)
    return parser.parse_args(argv)


def console() -> Console:
    return Console(file=io.StringIO(), width=200)


def output(c: Console) -> str:
    return c.file.getvalue()  # type: ignore[attr-defined]


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chat.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_chat_reads_scripted_input_and_shows_each_decision(tmp_path: Path):
    config = write_config(
        tmp_path,
        "backend: {base_url: 'http://127.0.0.1:9/v1', model: fake}\nobserver: {seed: 3}\n",
    )
    backend = ScriptedBackend(["Oh fun! Where did you go?", LONG, LONG, LONG, LONG, "Nice."])
    made: list[BackendConfig] = []

    def make_backend(cfg: BackendConfig) -> ScriptedBackend:
        made.append(cfg)
        return backend

    args = parse("chat", "--config", str(config), "--show", "--trace", str(tmp_path / "t.jsonl"))
    assert args.handler is chat_command
    stdin = io.StringIO("I went hiking.\n\nIt was a long trail.\n/quit\nnever read\n")
    c = console()
    assert chat_command(args, c, stdin=stdin, make_backend=make_backend) == 0
    text = output(c)
    assert "bot> Oh fun! Where did you go?" in text
    assert "execute;" in text and "fallback;" in text and "rejected: brevity" in text
    assert "2 turn(s), 3 LLM call(s)" in text  # the second turn stopped early: no progress
    assert made[0].model == "fake"
    records, episodes = read_trace(tmp_path / "t.jsonl")
    assert [r["kind"] for r in records] == ["execute", "fallback"]
    assert next(iter(episodes.values()))["llm_calls"] == 3


def test_chat_against_a_dead_endpoint_says_so_and_fails(tmp_path: Path, closed_port_url: str):
    config = write_config(tmp_path, f"backend: {{base_url: '{closed_port_url}', model: m}}\n")
    args = parse("chat", "--config", str(config))
    c = console()
    assert chat_command(args, c, stdin=io.StringIO("hello there\nhow are you\n")) == 1
    text = " ".join(output(c).split())
    assert "this reply is the observer's fallback, not the model's" in text
    assert "openai:m: cannot reach" in text and "2 turn(s)" in text


def test_chat_commands_are_not_sent_to_the_model(tmp_path: Path):
    config = write_config(tmp_path, "backend: {base_url: 'http://127.0.0.1:9/v1', model: fake}\n")
    backend = ScriptedBackend(["Hi!"])
    c = console()
    stdin = io.StringIO("/help\n/frobnicate\nhello\n")
    args = parse("chat", "--config", str(config))
    assert chat_command(args, c, stdin=stdin, make_backend=lambda cfg: backend) == 0
    text = output(c)
    assert "/quit or /exit" in text and "unknown command '/frobnicate'" in text
    assert "1 turn(s), 1 LLM call(s), 0 failed" in text


def test_chat_without_an_endpoint_is_a_clear_error(tmp_path: Path, monkeypatch):
    for var in ("GOVERNOR_BASE_URL", "GOVERNOR_MODEL", "GOVERNOR_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="no LLM endpoint configured"):
        chat_command(parse("chat"), console(), stdin=io.StringIO("hi\n"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("colour: blue\n", "unknown section.*colour"),
        ("observer: {leniency: 2}\n", r"observer: leniency: expected a number in \[0, 1\]"),
        ("observer: {patience: 2}\n", "observer: unknown key.*patience"),
        ("policy: {kind: oracle}\n", "policy: kind: expected llm or retrieval"),
        ("backend: {base_url: ftp://x}\n", "backend: base_url"),
        ("backend: {modle: x}\n", "backend: unknown key.*modle"),
        ("policy: [1, 2]\n", "policy: expected a mapping"),
        ("overlays: missing.yaml\n", "missing.yaml"),
    ],
)
def test_config_files_are_validated_with_clear_errors(tmp_path: Path, text: str, message: str):
    with pytest.raises(GovernorError, match=message):
        load_settings(write_config(tmp_path, text), environ={})


def test_backend_settings_come_from_the_file_then_the_environment(tmp_path: Path):
    env = {"GOVERNOR_BASE_URL": "http://env/v1", "GOVERNOR_MODEL": "env-model"}
    settings = load_settings(write_config(tmp_path, "backend: {model: mine}\n"), environ=env)
    assert settings.backend.base_url == "http://env/v1" and settings.backend.model == "mine"
    assert settings.observer_backend == settings.backend
    assert load_settings(None, environ={}).observer.max_regenerations == 3


def transcript(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "talk.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_audit_reports_features_verdicts_and_decisions(tmp_path: Path):
    turns = [
        {"role": "user", "content": "Hi! I just got back from the beach."},
        {"role": "assistant", "content": "Oh nice! How was the water?"},
        {"role": "user", "content": "Cold, but fun."},
        {"role": "assistant", "content": words(45)},  # long, within tolerance; not repetitive
        {"role": "user", "content": "Ha. Anyway."},
        {"role": "assistant", "content": LONG},
    ]
    path = transcript(tmp_path, [json.dumps(t) for t in turns])
    out = tmp_path / "audit.json"
    args = parse("audit", str(path), "--json", str(out))
    assert args.handler is audit_command
    c = console()
    assert audit_command(args, c) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    rows = report["turns"]
    assert [r["index"] for r in rows] == [1, 3, 5]
    assert set(rows[0]) == {"index", "features", "verdicts", "decision"}
    assert rows[0]["features"]["word_count"] == 6 and "tone" in rows[0]["features"]
    assert {v["constraint"] for v in rows[0]["verdicts"]} >= {"brevity", "tone", "questions"}
    assert [r["decision"]["kind"] for r in rows] == [
        "execute",
        "execute_with_feedback",
        "regenerate",
    ]
    assert "too long" in rows[2]["decision"]["feedback"]
    assert rows[2]["decision"]["fallback"]["move"] in {"acknowledge", "deflect", "ask_back"}
    assert "regenerate" in output(c)


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"role": "user", "content": "hi"}', "", "{not json"], "line 3: not valid JSON"),
        (['{"role": "user", "content": "hi"}', '["a"]'], "line 2: expected a JSON object"),
        (['{"role": "tool", "content": "x"}'], "line 1: role: expected user, assistant or system"),
        (['{"role": "assistant"}'], "line 1: content: expected a string"),
        (['{"role": "user", "content": "only me"}'], "at least one assistant turn"),
    ],
)
def test_audit_names_the_malformed_line(tmp_path: Path, lines: list[str], message: str):
    with pytest.raises(ConfigError, match=message):
        audit_command(parse("audit", str(transcript(tmp_path, lines))), console())


def test_audit_skips_system_lines_and_names_bad_bytes(tmp_path: Path):
    lines = ['{"role": "system", "content": "Be brief."}', '{"role": "user", "content": "hi"}']
    lines.append('{"role": "assistant", "content": "hello"}')
    assert [t.role for t in read_transcript(transcript(tmp_path, lines))] == ["user", "assistant"]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl: expected UTF-8 text, .*byte offset 32"):
        read_transcript(bad)


def test_calibrate_prints_thresholds_and_heldout_acceptance(data_dir: Path, tmp_path: Path):
    out = tmp_path / "overlays.yaml"
    args = parse("calibrate", "--data", str(data_dir), "--out", str(out), "--max-turns", "40")
    assert args.handler is calibrate_command
    c = console()
    assert calibrate_command(args, c) == 0
    text = output(c)
    assert "brevity" in text and "epsilon" in text and "held-out human turns accepted" in text
    assert out.is_file() and load_settings(write_config(tmp_path, f"overlays: {out}\n"))
