"""The conversation commands: `governor chat`, `governor audit`, `governor calibrate`.

`governor audit` has two cases: with ``--policy``, recorded agent runs judged under a policy
(:mod:`governor.guard.audit`); without, a small-talk transcript judged by the small-talk
observer (:mod:`governor.worlds.smalltalk.audit`).

Each ``add_*_parser(subparsers)`` adds one command with ``set_defaults(handler=...)``; a handler
takes the parsed arguments and a console and returns the exit status, raising governor errors
for bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from governor.backends import backend_from_config
from governor.config import check_range
from governor.conversation.chat import ChatSession, TurnResult
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_backend_args
from governor.trace import open_trace
from governor.worlds.smalltalk.audit import audit, read_transcript
from governor.worlds.smalltalk.settings import MakeBackend, conversations_dir, load_settings

QUIT = ("/quit", "/exit")
HELP = "commands: /quit or /exit (or end of input, Ctrl-D) ends the chat; /help shows this"


def add_chat_parser(sub: Subcommands) -> None:
    """`governor chat`."""
    chat = sub.add_parser("chat", help="chat with a configured model under the small-talk observer")
    chat.add_argument("--config", type=Path, help="conversation config (YAML or JSON)")
    chat.add_argument("--show", action="store_true", help="show verdicts and interventions")
    chat.add_argument("--trace", type=Path, help="record every decision (.jsonl or .sqlite)")
    add_backend_args(chat)
    chat.set_defaults(handler=chat_command)


def add_audit_parser(sub: Subcommands) -> None:
    """`governor audit`."""
    aud = sub.add_parser(
        "audit",
        help="judge recorded agent runs (--policy) or a small-talk transcript offline",
        description="With --policy: every assistant message of each run (a JSON line"
        ' {"messages": [...]}) is judged by the policy given the recorded history before it.'
        " Without: each assistant turn of a small-talk transcript is judged by the small-talk"
        " observer (--config).",
    )
    aud.add_argument(
        "transcript",
        type=Path,
        nargs="?",
        metavar="FILE",
        help='with --policy: runs, JSON lines {"messages": [...]}; without: a transcript,'
        ' JSON lines {"role": ..., "content": ...}',
    )
    aud.add_argument("--policy", type=Path, help="a policy file: audit agent runs under it")
    aud.add_argument(
        "--store",
        metavar="sqlite:PATH|postgres:DSN",
        help="with --policy: audit the sessions of a session store (governor serve's) instead"
        " of a file",
    )
    aud.add_argument("--session", help="with --store: one stored session id (default: all)")
    aud.add_argument("--config", type=Path, help="conversation config (YAML or JSON), transcripts")
    aud.add_argument("--json", type=Path, help="write the report here")
    aud.add_argument("--html", type=Path, help="write an HTML report here (with --policy)")
    aud.set_defaults(handler=audit_command)


def add_calibrate_parser(sub: Subcommands) -> None:
    """`governor calibrate`."""
    cal = sub.add_parser("calibrate", help="estimate overlay thresholds from human conversation")
    cal.add_argument("--data", type=Path, help="the corpora folder (default: the shared data)")
    cal.add_argument("--out", type=Path, default=Path("smalltalk-overlays.yaml"))
    cal.add_argument("--max-turns", type=int, default=1500, help="responses per corpus per split")
    cal.add_argument("--seed", type=int, default=0, help="seed of the dialogue split")
    cal.add_argument(
        "--embed",
        action="store_true",
        help="compute coherence and assistance with the local embedding model (the [embed] extra)",
    )
    cal.set_defaults(handler=calibrate_command)


def chat_command(
    args: argparse.Namespace,
    console: Console,
    *,
    stdin: TextIO | None = None,
    make_backend: MakeBackend = backend_from_config,
) -> int:
    """Read user turns from ``stdin`` until end of input or /quit; print each reply."""
    settings = load_settings(args.config)
    flags = {"base_url": args.base_url, "model": args.model, "api_key": args.api_key}
    flags["timeout_s"] = args.timeout
    flags["model_path"] = getattr(args, "backend_model_path", None)
    overrides = {k: v for k, v in flags.items() if v is not None}
    if overrides:
        settings = dataclasses.replace(
            settings, backend=dataclasses.replace(settings.backend, **overrides)
        )
    observer = settings.make_observer(make_backend)
    stdin = stdin or sys.stdin
    trace = open_trace(args.trace) if args.trace else None
    session = ChatSession(observer, trace=trace)
    if stdin.isatty():
        console.print(f"[dim]chat under the small-talk observer; {HELP}[/dim]")
    try:
        while True:
            if stdin.isatty():
                console.print("[bold]you>[/bold] ", end="")
            line = stdin.readline()
            if not line or line.strip() in QUIT:
                break
            if not line.strip():
                continue
            if line.strip().startswith("/"):  # a command, never sent to the model
                known = line.strip() == "/help"
                console.print(
                    HELP if known else f"unknown command {line.strip()!r}; {HELP}", markup=False
                )
                continue
            result = session.respond(line.strip())
            text = result.reply if result.reply is not None else "(no reply)"
            console.print(f"[bold]bot>[/bold] {escape(text)}", emoji=False)
            if result.llm_failed:
                say_model_failed(console, result)
            if args.show:
                show_turn(console, result)
    finally:
        session.close()
        if trace is not None:
            trace.close()
    calls = sum(t.llm_calls for t in session.turns)
    failed = sum(t.llm_failed for t in session.turns)
    console.print(f"{len(session.turns)} turn(s), {calls} LLM call(s), {failed} failed")
    model_turns = [t for t in session.turns if t.llm_calls or t.llm_failed]
    return 1 if model_turns and all(t.llm_failed for t in model_turns) else 0


def say_model_failed(console: Console, result: TurnResult) -> None:
    """Say on the terminal that a reply came from the fallback because the model failed."""
    errors = "; ".join(result.decision.errors) or "no answer"
    console.print(
        f"  [yellow]{result.llm_failed} LLM call(s) failed ({escape(errors)}): this reply is the"
        " observer's fallback, not the model's[/yellow]",
        emoji=False,
    )


def show_turn(console: Console, result: TurnResult) -> None:
    """The decision behind a reply: kind, what was rejected or noted, feedback, cost."""
    d = result.decision
    console.print(
        f"  [dim]{d.kind.value}; {d.regenerations} regeneration(s); {result.llm_calls} LLM "
        f"call(s); {1000 * result.seconds:.0f} ms; {escape(d.reason)}[/dim]"
    )
    lines = []
    for k, attempt in enumerate(d.attempts):
        if attempt.chosen is not None:
            continue
        for cand, row in zip(attempt.candidates, attempt.verdicts, strict=False):
            if cand.error:
                lines.append(f"attempt {k}: invalid: {cand.error}")
            lines += [
                f"attempt {k}: rejected: {v.constraint}: {v.descriptor}"
                for v in row
                if not v.admissible
            ]
    if d.kind.value != "fallback":
        lines += [f"noted: {v.constraint}: {v.descriptor}" for v in d.verdicts if v.needs_feedback]
    if d.feedback is not None:
        lines.append(f"note for the next turn: {d.feedback.text}")
    for line in lines:
        console.print(f"  [dim]{escape(line)}[/dim]", emoji=False)


def audit_command(args: argparse.Namespace, console: Console) -> int:
    """Judge recorded runs under a policy, or each assistant turn of a small-talk transcript;
    print a table, write JSON (and HTML) if asked."""
    if args.store is not None and args.policy is None:
        raise ConfigError(f"--store: {expected('--policy beside it', '--store alone')}")
    if args.session is not None and args.store is None:
        raise ConfigError(f"--session: {expected('--store beside it', '--session alone')}")
    if args.policy is not None:
        return _audit_runs(args, console)
    if args.transcript is None:
        raise ConfigError("audit: expected a transcript file, found none")
    if args.html is not None:
        raise ConfigError(
            f"--html: {expected('--policy beside it (runs, not a transcript)', '--html alone')}"
        )
    turns = read_transcript(args.transcript)
    report = audit(turns, load_settings(args.config))
    for row in report["turns"]:
        rejected = [v["constraint"] for v in row["verdicts"] if not v["admissible"]]
        noted = [v["constraint"] for v in row["verdicts"] if v["admissible"] and v["deviation"]]
        detail = ", ".join(rejected) or ", ".join(noted) or "-"
        console.print(f"turn {row['index']:>3}: {row['decision']['kind']:<22} {escape(detail)}")
    if args.json is not None:
        write_json(args.json, report)
        console.print(f"report written to {args.json}")
    return 0


def _audit_runs(args: argparse.Namespace, console: Console) -> int:
    """``governor audit --policy``: exit 0 when every line was judged, 2 with malformed lines."""
    from rich.progress import Progress

    from governor.guard import load_policy
    from governor.guard.audit import audit_runs, html_report

    policy = load_policy(args.policy)
    ids: list[str] = []
    if args.store is not None:
        from governor.cli.stored import stored_runs

        if args.transcript is not None:
            raise ConfigError(
                f"audit: expected runs in a file or --store, found both ({args.transcript})"
            )
        runs, ids = stored_runs(args.store, args.session)
        total = len(runs)

        def lines() -> Iterator[str]:
            yield from runs

    else:
        if args.transcript is None:
            raise ConfigError("audit --policy: expected a file of runs or --store, found neither")
        path: Path = args.transcript
        try:
            with path.open("rb") as f:
                total = sum(1 for _ in f)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc

        def lines() -> Iterator[str]:
            with path.open("r", encoding="utf-8", errors="replace") as f:
                yield from f

    shown = Console(stderr=True)
    with Progress(console=shown, transient=True, disable=total < 200) as bar:
        task = bar.add_task("auditing", total=total)
        report = audit_runs(policy, lines(), lambda n: bar.update(task, completed=n))
    for c in report["conversations"]:
        if ids:  # a run of the store: its session's id
            c["session"] = ids[c["line"] - 1]
        where = f"session {escape(c['session'])}" if ids else f"line {c['line']:>5}"
        for r in c["refused"]:
            tool = r["tool"] or "-"
            console.print(f"{where} message {r['message']:>3} {escape(tool):<24}"
                          f" {escape(', '.join(r['rules']))}", soft_wrap=True)  # fmt: skip
    s = report["summary"]
    for m in s["malformed"]:
        where = f"session {escape(ids[m['line'] - 1])}" if ids else f"line {m['line']}"
        console.print(f"{where}: malformed: {escape(m['error'])}", soft_wrap=True)
    console.print(
        f"{s['runs']} runs, {s['steps']} steps judged, {s['refused_steps']} refused in"
        f" {s['runs_with_refusals']} runs, {len(s['malformed'])} malformed lines;"
        f" {s['seconds']:.2f} s ({s['runs_per_minute']} runs a minute), 0 model calls"
    )
    if args.json is not None:
        write_json(args.json, report)
        console.print(f"report written to {args.json}")
    if args.html is not None:
        args.html.write_text(html_report(report), encoding="utf-8")
        console.print(f"HTML report written to {args.html}")
    return 2 if s["malformed"] else 0


def calibrate_command(args: argparse.Namespace, console: Console) -> int:
    """Calibrate the shipped rule set on the corpora; print thresholds and held-out acceptance."""
    from governor.overlays.calibrate import calibrate

    check_range("max_turns", args.max_turns, 10, 1_000_000)
    embed = None
    if getattr(args, "embed", False):
        from governor.overlays.embed.runtime import local_embed

        embed = local_embed()
    doc = calibrate(
        args.data or conversations_dir(),
        args.out,
        max_turns=args.max_turns,
        split_seed=args.seed,
        embed=embed,
    )
    for rule in doc["overlays"]:
        bounds = ", ".join(f"{k} {v:g}" for k, v in rule["bounds"].items())
        console.print(
            f"{rule['name']:<20} {rule['feature']:<18} {bounds:<14} epsilon {rule['epsilon']:g}"
            f"  (human median {rule['calibration']['human_median']:g})"
        )
    held = doc["provenance"].get("heldout_acceptance", {})
    if held:
        console.print(f"held-out human turns accepted: {held['accepted']:.2%}")
        worst = sorted(held["false_positive"].items(), key=lambda kv: -kv[1])
        console.print("rejected by: " + ", ".join(f"{k} {v:.2%}" for k, v in worst))
    console.print(f"overlays written to {args.out}")
    return 0
