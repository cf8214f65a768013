"""How long the offline overlay features take per response, after their models are loaded.

:func:`feature_speed` times every registered feature together on a few built-in replies (or the
held-out human turns of a corpus folder), each with cold per-text caches, and loading the text
resources (tagger, word frequencies, VADER) apart. It has no command of its own. Imports the
overlay features and the corpora reader.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from governor.overlays.features import specificity, text
from governor.overlays.features.base import FEATURES, measure_all
from governor.overlays.features.dialogue import Turn

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


def _clear_text_caches() -> None:
    for fn in (text.tags, text.compound, text.content_stems, specificity.counts):
        fn.cache_clear()


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
