"""`governor bench models`: every LLM path of governor at a stated small budget on one model.

By default the model is the fetched local one (``--model-path gemma3-270m``); the standard backend
flags name any other (an endpoint, a folder). Each path runs through its own benchmark's functions
(:mod:`governor.papers.models.paths`), inside a meter, so every row carries the LLM calls, the
failed calls and the replies no parser could read, besides the model's time and the wall time.
A path that cannot run on this model within a CPU budget has a row saying why and what was tried.
The JSON (one row per path) is rewritten after each path, so a long run loses nothing finished.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.backends import Backend, backend_from_config
from governor.backends.local_model import LOCAL_MODEL, read_marker, resolve_model_path
from governor.config import BackendConfig
from governor.errors import ConfigError, GovernorError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_backend_args, backend_config_from_args
from governor.papers.models import paths as mp
from governor.papers.models import values as mv
from governor.papers.models.paths import Budget
from governor.papers.models.table import print_rows
from governor.usage import metered

BUDGETS = {
    "tiny": Budget(1, 2, 1, 1, 1, 10, "off", "rooms/0_1", "1", 2, 1, 1, 1, 1),
    "small": dataclasses.replace(
        Budget(2, 60, 2, 3, 2, 200, "auto", "rooms/0_1,rooms/4_3", "1", 8, 2, 2, 7, 3),
        lora_minutes=5.0,
        lora_iterations=10_000,
        head_transitions=200,
        head_iterations=2000,
        value_eval_states=20,
    ),
}
CHAT_LINES = (
    "Hi! How was your weekend?",
    "Nice. Did you do anything fun?",
    "I went hiking with my sister, it rained the whole time.",
    "What do you like to do when it rains?",
)
LOCAL_ONLY = "not run: a safety value trains on the weights, so it needs a local model folder"


def chat_path(backend: Backend, b: Budget) -> mp.PathResult:
    """`governor chat`: the default conversation settings on ``backend``, scripted user lines."""
    from governor.conversation.chat import ChatSession
    from governor.worlds.smalltalk.settings import load_settings

    settings = load_settings(None)
    session = ChatSession(settings.make_observer(lambda _config: backend))
    for line in CHAT_LINES[: b.chat_turns]:
        session.respond(line)
    turns = session.turns
    bad = sum(not c.valid for t in turns for a in t.decision.attempts for c in a.candidates)
    measures = {
        "turns": len(turns),
        "llm_calls_per_turn": sum(t.llm_calls for t in turns) / max(1, len(turns)),
        "fallbacks": sum(t.decision.kind.value == "fallback" for t in turns),
        "regenerations": sum(t.decision.regenerations for t in turns),
        "observer_share_of_model_time": mp.observer_share(turns),
        **mp.degenerate_counts(turns),
        "transcript": [
            {"user": t.context[-1].text, "bot": t.reply, "decision": t.decision.kind.value}
            for t in turns
        ],
    }
    p = settings.policy
    decoding = {"temperature": p.temperature, "max_tokens": p.max_tokens, "stop": ["\\n"]}
    return mp.PathResult({"turns": len(turns)}, decoding | {"examples": p.examples}, measures, bad)


PATHS: dict[str, Callable[[Backend, Budget], mp.PathResult]] = {
    "driving": mp.driving_path,
    "smalltalk": mp.smalltalk_path,
    "safety-chip": mp.safety_chip_path,
    "reguard-zero-shot": mp.zero_shot_path,
    "lang2ltl": mp.lang2ltl_path,
    "chat": chat_path,
    "reguard-llm-value": mv.lora_value_path,
    "reguard-frozen-value": mv.frozen_value_path,
}
VALUE_PATHS = ("reguard-llm-value", "reguard-frozen-value")  # they need the weights in a folder
NOT_RUN: dict[str, str] = {}  # a path that cannot run here: the reason


def model_info(config: BackendConfig) -> dict[str, Any]:
    """The model's name, weights and quantisation, as far as they can be known here."""
    if config.model_path is None:
        return {"name": config.model, "endpoint": config.base_url, "quantisation": "as served"}
    folder = resolve_model_path(config.model_path)
    marker = read_marker(folder) or {}
    gguf = str(marker.get("gguf") or "")
    quant = gguf.removesuffix(".gguf").rsplit("-", 1)[-1].upper() if gguf else "as saved"
    return {
        "name": marker.get("name") or folder.name,
        "weights": gguf or str(folder),
        "quantisation": f"{quant} (GGUF), dequantised to float32 by transformers"
        if gguf
        else quant,
        "runtime": "transformers, in-process, 1 torch thread",
        "source": marker.get("source"),
    }


def run_path(name: str, backend: Backend, budget: Budget) -> dict[str, Any]:
    """One row: the path's result, or the error that stopped it, with the metered usage."""
    start = time.perf_counter()
    result: mp.PathResult | None = None
    status = "ok"
    with metered() as meter:
        try:
            result = PATHS[name](backend, budget)
        except GovernorError as exc:  # reported in its row; the other paths still run
            status = f"failed: {type(exc).__name__}: {exc}"
    usage = meter.total
    return {
        "path": name,
        "status": status,
        "budget": result.budget if result else {},
        "decoding": result.decoding if result else {},
        "measures": result.measures if result else {},
        "llm_calls": usage.calls,
        "llm_failed": usage.failed,
        "unparsable": result.unparsable if result else None,
        "tokens": usage.tokens,
        "model_seconds": round(usage.seconds, 2),
        "wall_seconds": round(time.perf_counter() - start, 2),
    }


def selected(only: str | None) -> list[str]:
    """The paths ``--only`` names (all by default), in the order of :data:`PATHS`."""
    known = [*PATHS, *NOT_RUN]
    if not only:
        return known
    asked = [x.strip() for x in only.split(",") if x.strip()]
    unknown = [x for x in asked if x not in known]
    if unknown or not asked:
        raise ConfigError(f"--only: {expected('some of ' + ', '.join(known), only)}")
    return [x for x in known if x in asked]


def run(
    config: BackendConfig,
    budget: str = "small",
    only: str | None = None,
    *,
    json_path: Path | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    backend: Backend | None = None,
) -> dict[str, Any]:
    """Every selected path on the model of ``config`` (``backend``: that model, loaded); the
    JSON-ready result."""
    if budget not in BUDGETS:
        raise ConfigError(f"--budget: {expected(' or '.join(BUDGETS), budget)}")
    names = selected(only)
    start = time.perf_counter()
    if backend is None:
        backend = backend_from_config(config)
        backend.check()
    out: dict[str, Any] = {
        "model": model_info(config),
        "budget_name": budget,
        "budget": dataclasses.asdict(BUDGETS[budget]),
        "load_seconds": round(time.perf_counter() - start, 2),
        "rows": [],
    }
    for name in names:
        local = mv.model_folder_of(backend) is not None
        reason = NOT_RUN.get(name) or (LOCAL_ONLY if name in VALUE_PATHS and not local else None)
        if reason is not None:
            row: dict[str, Any] = {"path": name, "status": reason, "llm_calls": 0}
            row |= {"llm_failed": 0, "unparsable": None, "model_seconds": 0.0, "wall_seconds": 0.0}
        else:
            row = run_path(name, backend, BUDGETS[budget])
        out["rows"].append(row)
        out["wall_seconds"] = round(time.perf_counter() - start, 2)
        if json_path is not None:
            write_json(json_path, out)
        if on_row is not None:
            on_row(row)
    return out


def add_parser(bench: Subcommands) -> None:
    """`governor bench models`."""
    p = bench.add_parser("models", help="every LLM path on one model at a small budget")
    p.add_argument("--budget", default="small", choices=tuple(BUDGETS), help="default: small")
    p.add_argument("--only", help=f"comma-separated paths (default: all of {', '.join(PATHS)})")
    p.add_argument("--json", type=Path, help="write the results here (after every path)")
    add_backend_args(p)
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    config = backend_config_from_args(args)
    if config.model_path is None and config.base_url is None:  # the local model by default
        config = dataclasses.replace(config, model_path=LOCAL_MODEL)
    result = run(
        config,
        args.budget,
        args.only,
        json_path=args.json,
        on_row=lambda r: print_rows(console, [r]),
    )
    info = result["model"]
    console.print(
        f"{info['name']} ({info['quantisation']}); budget {result['budget_name']}; "
        f"{result['wall_seconds']:.0f} s in all (model load {result['load_seconds']:.0f} s)"
    )
    print_rows(console, result["rows"], summary=True)
    failed = [r for r in result["rows"] if r["status"].startswith("failed")]
    return 1 if failed else 0
