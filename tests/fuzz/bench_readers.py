"""How long each reader takes over 1 MB of input (accepted or refused): a benchmark, not a test.

    python tests/fuzz/bench_readers.py

prints one line per reader with the median of 5 runs in milliseconds.
"""

from __future__ import annotations

import contextlib
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


def median_ms(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with contextlib.suppress(GovernorError):
            fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    word = "x" * MB
    (folder / "c.yaml").write_text(yaml.safe_dump({"max_regenerations": word}), encoding="utf-8")
    line = json.dumps({"role": "assistant", "content": word})
    (folder / "t.jsonl").write_text(f'{{"role": "user", "content": "hi"}}\n{line}\n', "utf-8")
    record = {"type": "decision", "episode": "e", "t": 0, "pad": word}
    (folder / "trace.jsonl").write_text(json.dumps(record) + "\n" + '{"torn', encoding="utf-8")
    cases: dict[str, Callable[[], object]] = {
        "ltl infix, 1 MB of whitespace": lambda: parse("a" + " " * MB),
        "ltl infix, 99 KB chain": lambda: parse(" & ".join(["p"] * 24_000)),
        "ltl prefix, 99 KB chain": lambda: parse_prefix("& a " * 24_000 + "b"),
        "config file, 1 MB value": lambda: from_mapping(
            ObserverConfig, load_mapping(folder / "c.yaml"), where="c.yaml"
        ),
        "transcript, 1 MB turn": lambda: read_transcript(folder / "t.jsonl"),
        "trace, 1 MB record and a torn line": lambda: read_trace(folder / "trace.jsonl"),
        "features of a 1 MB reply": lambda: measure("word_count", (), word),
    }
    warnings.simplefilter("ignore")
    for name, fn in cases.items():
        print(f"{name:40s} {median_ms(fn):8.1f} ms")


if __name__ == "__main__":
    main()
