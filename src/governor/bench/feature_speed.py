"""How long the offline overlay features take per response, after their models are loaded.

:func:`feature_speed` times every registered feature together on a few built-in replies (or the
held-out human turns of a corpus folder), each with cold per-text caches, and loading the text
resources (tagger, word frequencies, VADER) apart. :func:`overlay_speed` times what one guarded
step spends judging its candidates: every shipped small-talk overlay's ``Overlay.evaluate`` on two
candidate replies after a dialogue, with the per-text caches warm (texts recur, as the stub
upstream's reply does in ``governor bench serve``), holding what the step before saw (the
replies and the user's last turn new, as in a served conversation), or cleared (every text new).
``python -m governor.bench.feature_speed`` prints both (:func:`add_parser` makes it
``governor bench feature-speed`` where the command table registers it).
Imports the overlays, their features and the corpora reader.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from rich.console import Console

from governor.flags import Subcommands
from governor.overlays.features import text
from governor.overlays.features.base import FEATURES, measure_all
from governor.overlays.features.dialogue import Turn
from governor.overlays.loader import DEFAULT_OVERLAYS, load_overlays

SAMPLES: tuple[tuple[tuple[Turn, ...], str], ...] = (
    ((Turn("user", "Hi! How's your day going?"),), "Pretty good, thanks. Yours?"),
    (
        (Turn("user", "The weather will be nice this weekend. How would you spend it?"),),
        "Great question! Here are some ideas: 1) Visit the Boston Public Garden, which opened in"
        " 1837. 2) Take a walk along the Charles River. 3) Try a new cafe. Let me know if you'd"
        " like more suggestions!",
    ),
    (
        (Turn("user", "I've been so tired lately."), Turn("assistant", "Oh no, busy week?")),
        "You should try going to bed earlier. Make sure you drink enough water, and consider"
        " cutting back on caffeine after noon.",
    ),
    ((Turn("user", "I just got back from a walk."),), "Oh nice, where did you go? Was it busy?"),
)


# A small-talk dialogue with earlier assistant turns, so that the window and drift overlays run.
DIALOGUE: tuple[Turn, ...] = (
    Turn("user", "Hi! How's your day going?"),
    Turn("assistant", "Pretty good, thanks. Yours?"),
    Turn("user", "Not bad at all. I've been so busy with work lately."),
    Turn("assistant", "Oh, that sounds tiring. Anything fun planned to unwind?"),
    Turn("user", "I went hiking by the lake this weekend."),
)
CANDIDATES = (
    "Oh nice, that sounds like a lovely weekend! What did you enjoy most about it?",
    "That sounds great, the lake must have been beautiful. Was it busy?",
)


def _clear_text_caches() -> None:
    text.clear_caches()


def feature_speed(n: int = 200, *, data_dir: str | Path | None = None) -> dict[str, float]:
    """Time all offline features together on ``n`` responses, each with cold per-text caches.

    Responses come from the held-out human turns under ``data_dir`` when given, else from a few
    built-in examples. Loading the tagger, word frequencies and VADER is timed separately.
    """
    start = time.perf_counter()
    text.warm_up()
    load_s = time.perf_counter() - start
    if data_dir is not None:
        from governor.overlays.corpora import load_turns

        turns = load_turns(data_dir, "heldout", max_turns=max(1, n // 4 + 1))
        cases = [(t.context, t.response) for t in turns][:n]
    else:
        cases = [SAMPLES[i % len(SAMPLES)] for i in range(n)]
    times = []
    for context, candidate in cases:
        _clear_text_caches()
        t0 = time.perf_counter()
        measure_all(context, candidate)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "responses": float(len(times)),
        "features": float(len(FEATURES)),
        "median_ms": 1000 * statistics.median(times),
        "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
        "max_ms": 1000 * times[-1],
        "load_s": load_s,
    }


Caches = Literal["warm", "new", "cold"]
CACHES: tuple[Caches, ...] = ("warm", "new", "cold")


def overlay_speed(
    n: int = 300,
    *,
    caches: Caches = "warm",
    dialogue: Sequence[Turn] = DIALOGUE,
    candidates: Sequence[str] = CANDIDATES,
) -> dict[str, float]:
    """Time ``n`` steps of judging ``candidates`` after ``dialogue`` with every shipped small-talk
    overlay (``Overlay.evaluate``), after the text models are loaded. Before each step the
    per-text caches are kept (``warm``), cleared and then filled by the step before, which judged
    the dialogue's last assistant turn (``new``: only the replies and the user's last turn are
    new to the step), or cleared (``cold``)."""
    overlays = load_overlays(DEFAULT_OVERLAYS)
    text.warm_up()
    context = tuple(dialogue)
    before = len(context) - 2
    times, cpu = [], []
    for _ in range(n):
        if caches != "warm":
            _clear_text_caches()
        if caches == "new" and before >= 0 and context[before].role == "assistant":
            for overlay in overlays:
                overlay.evaluate(context[:before], context[before].text)
        t0, c0 = time.perf_counter(), time.process_time()
        for candidate in candidates:
            for overlay in overlays:
                overlay.evaluate(context, candidate)
        cpu.append(time.process_time() - c0)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "steps": float(len(times)),
        "overlays": float(len(overlays)),
        "candidates": float(len(candidates)),
        "median_ms": 1000 * statistics.median(times),
        "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
        "cpu_ms": 1000 * sum(cpu) / max(1, len(cpu)),
    }


def report_lines(n: int = 300) -> list[str]:
    """The figures of :func:`feature_speed` and of :func:`overlay_speed` in each cache mode."""
    f = feature_speed(n)
    lines = [
        f"all {f['features']:.0f} features, cold caches: median {f['median_ms']:.3f} ms,"
        f" p95 {f['p95_ms']:.3f} ms per reply ({f['responses']:.0f} replies;"
        f" models loaded in {f['load_s']:.2f} s)"
    ]
    for caches in CACHES:
        r = overlay_speed(n, caches=caches)
        lines.append(
            f"overlay evaluate, {caches} caches: {r['overlays']:.0f} overlays"
            f" x {r['candidates']:.0f} candidates per step: median {r['median_ms']:.3f} ms,"
            f" p95 {r['p95_ms']:.3f} ms, CPU {r['cpu_ms']:.3f} ms per step ({r['steps']:.0f} steps)"
        )
    return lines


def add_parser(bench: Subcommands) -> None:
    """``governor bench feature-speed`` (for a command table that registers it)."""
    speed = bench.add_parser(
        "feature-speed", help="overlay features' time per reply and overlays' time per step"
    )
    speed.add_argument("-n", type=int, default=300, help="steps (overlays) or replies (features)")
    speed.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    for line in report_lines(args.n):
        console.print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """Print :func:`report_lines`."""
    parser = argparse.ArgumentParser(
        prog="python -m governor.bench.feature_speed", description=__doc__.split("\n")[0]
    )
    parser.add_argument("-n", type=int, default=300, help="steps (overlays) or replies (features)")
    for line in report_lines(parser.parse_args(argv).n):
        print(line)


if __name__ == "__main__":
    main()
