"""How long each reader takes over 1 MB of input (accepted or refused): a benchmark, not a test.

    python tests/fuzz/bench_readers.py

prints one line per reader with the median of 5 runs in milliseconds.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import yaml

from governor.config import ObserverConfig, from_mapping
from governor.errors import GovernorError
from governor.files import load_mapping
from governor.ltl.parser import parse, parse_prefix
from governor.overlays.features.base import measure
from governor.trace import read_trace
from governor.worlds.smalltalk.audit import read_transcript

MB = 1_000_000


def median_ms(fn: Callable[[], object], accepts: bool, runs: int = 5) -> float:
    """The median time of ``fn``; it must accept its input (or refuse it) every time."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            fn()
            accepted = True
        except GovernorError:
            accepted = False
        times.append(time.perf_counter() - start)
        if accepted != accepts:
            raise SystemExit(f"expected the input to be {'accepted' if accepts else 'refused'}")
    return 1000 * statistics.median(times)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    word = "x" * MB
    (folder / "c.yaml").write_text(yaml.safe_dump({"max_regenerations": word}), encoding="utf-8")
    line = json.dumps({"role": "assistant", "content": word})
    (folder / "t.jsonl").write_text(f'{{"role": "user", "content": "hi"}}\n{line}\n', "utf-8")
    record = {"type": "decision", "episode": "e", "t": 0, "pad": word}
    (folder / "trace.jsonl").write_text(json.dumps(record) + "\n" + '{"torn', encoding="utf-8")
    # each case with whether its input is valid (accepted) or not (refused, with a GovernorError)
    cases: dict[str, tuple[Callable[[], object], bool]] = {
        "ltl infix, 1 MB of whitespace": (lambda: parse("a" + " " * MB), False),
        "ltl infix, 99 KB chain": (lambda: parse(" & ".join(["p"] * 24_000)), True),
        "ltl prefix, 99 KB chain": (lambda: parse_prefix("& a " * 24_000 + "b"), False),
        "config file, 1 MB value": (
            lambda: from_mapping(ObserverConfig, load_mapping(folder / "c.yaml"), where="c.yaml"),
            False,
        ),
        "transcript, 1 MB turn": (lambda: read_transcript(folder / "t.jsonl"), True),
        "trace, 1 MB record and a torn line": (lambda: read_trace(folder / "trace.jsonl"), True),
        "features of a 1 MB reply": (lambda: measure("word_count", (), word), True),
    }
    warnings.simplefilter("ignore")
    for name, (fn, accepts) in cases.items():
        outcome = "accepted" if accepts else "refused"
        print(f"{name:40s} {median_ms(fn, accepts):8.1f} ms  ({outcome})")


if __name__ == "__main__":
    main()
