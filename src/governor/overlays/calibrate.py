"""Calibrating overlay thresholds on human conversation, and measuring human acceptance.

:func:`calibrate` estimates, on the calibration split of the human corpora, the tone weights
(least squares against Topical-Chat sentiment labels), the maximum expected specificity counts,
the human reference (quantiles of the small-talk criteria) and every rule's bound and epsilon as
quantiles of human values, then writes the overlay YAML with its provenance (files and their
hashes, split, sizes, quantiles). A rule is calibrated on the human turns where it applies: its
condition holds and, for a ``last_n`` or trajectory rule, the speaker has said enough turns to
fill its window. :func:`human_acceptance` measures, on turns the calibration never saw, how often
humans would have been rejected.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from governor.overlays.corpora import (
    CORPORA,
    HumanTurn,
    SplitName,
    corpus_files,
    load_turns,
    read_corpus_bytes,
)
from governor.overlays.defaults import SMALL_TALK, RuleTemplate
from governor.overlays.features.base import (
    DEFAULT_RESOURCES,
    Embed,
    Resources,
    SpecificityNorms,
    Tokenizer,
    ToneWeights,
    get_feature,
)
from governor.overlays.features.dialogue import bot_history
from governor.overlays.features.specificity import counts
from governor.overlays.features.tone import SENTIMENT_VALENCE, fit_tone_weights
from governor.overlays.features.trajectory import MIN_POINTS
from governor.overlays.loader import overlay_from, parse_overlays
from governor.overlays.reference import fit_reference
from governor.overlays.rules import Overlay

QUANTILES: Mapping[str, float] = {"bound": 0.95, "reject": 0.995, "specificity_max": 0.995}
HEADER = "# Small-talk overlays calibrated on human conversation by calibrate(); see provenance.\n"
TONE_FIT_SCALE = 4  # the tone fit reads this many times max_turns Topical-Chat responses
MIN_CONDITIONED = 30  # a conditional rule with fewer human examples uses all turns
REFERENCE = ("word_count", "tone", "specificity", "coherence")  # the paper's four criteria


def calibrate(
    data_dir: str | Path,
    out_path: str | Path,
    *,
    quantiles: Mapping[str, float] = QUANTILES,
    split_seed: int = 0,
    fraction: float = 0.5,
    max_turns: int = 1500,
    corpora: Sequence[str] = CORPORA,
    rules: Sequence[RuleTemplate] = SMALL_TALK,
    tokenizer: Tokenizer | None = None,
    embed: Embed | None = None,
    heldout: bool = True,
) -> dict[str, Any]:
    """Estimate the overlays from the calibration split, write them to ``out_path``, return them.

    ``max_turns`` responses per corpus per split; with ``heldout`` the human acceptance on the
    held-out split is measured and recorded too.
    """
    start = time.perf_counter()
    q = {**QUANTILES, **quantiles}

    def sample(split: SplitName, n: int, names: Sequence[str]) -> list[HumanTurn]:
        return load_turns(
            data_dir, split, seed=split_seed, fraction=fraction, max_turns=n, corpora=names
        )

    turns = sample("calibration", max_turns, corpora)
    labelled = turns  # Topical-Chat alone has sentiment labels: the tone fit takes more of it
    if "topical_chat" in corpora:
        labelled = sample("calibration", TONE_FIT_SCALE * max_turns, ("topical_chat",))
    tone, tone_record = _fit_tone(labelled)
    norms = _specificity_norms(turns, q["specificity_max"])
    res = Resources(tokenizer, embed, tone, norms)
    prefetch(embed, turns)
    values = {
        f: [get_feature(f).fn(h.context, h.response, res=res) for h in turns] for f in REFERENCE
    }
    reference = fit_reference(values, {f: get_feature(f).method_with(res) for f in REFERENCE})
    overlays = [_rule(t, turns, res, q) for t in rules]
    document: dict[str, Any] = {
        "version": 1,
        "provenance": {
            "made_by": "governor.overlays.calibrate.calibrate",
            "data_dir": os.path.relpath(data_dir),
            "files": {c: _file_records(Path(data_dir), c) for c in corpora},
            "split": {
                "seed": split_seed,
                "fraction": fraction,
                "max_turns": max_turns,
                "unit": "dialogue",
                "rule": "calibration iff sha256(f'{seed}:{corpus}:{dialogue}') < fraction",
                "subsample": "dialogues in sha256(seed + 1) order until max_turns responses",
            },
            "sizes": {"calibration": _sizes(turns)},
            "quantiles": dict(q),
            "tone_fit": tone_record,
            "feature_methods": {
                f: get_feature(f).method_with(res) for f in sorted({t.feature for t in rules})
            },
        },
        "features": {
            "tone_weights": {"whole": tone.whole, "sentences": list(tone.sentences)},
            "specificity_max": {f.name: getattr(norms, f.name) for f in fields(norms)},
            "human_reference": reference.to_dict(),
        },
        "overlays": overlays,
    }
    if heldout:
        held = sample("heldout", max_turns, corpora)
        prefetch(embed, held)
        built = parse_overlays(document, where=str(out_path), tokenizer=tokenizer, embed=embed)
        rate, per_overlay = human_acceptance(built, held)
        document["provenance"]["sizes"]["heldout"] = _sizes(held)
        document["provenance"]["heldout_acceptance"] = {
            "accepted": round(rate, 4),
            "false_positive": {k: round(v, 4) for k, v in per_overlay.items()},
        }
    document["provenance"]["seconds"] = round(time.perf_counter() - start, 1)
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    Path(out_path).write_text(HEADER + text, encoding="utf-8")
    return document


def prefetch(embed: Embed | None, turns: Sequence[HumanTurn]) -> None:
    """Let an embedding function with a ``prefetch`` method encode the turns' texts in batches."""
    warm = getattr(embed, "prefetch", None)
    if callable(warm):
        warm([t.response for t in turns] + [t.context[-1].text for t in turns if t.context])


def human_acceptance(
    overlays: Sequence[Overlay], turns: Sequence[HumanTurn]
) -> tuple[float, dict[str, float]]:
    """(share of human responses every overlay admits, share each overlay rejects)."""
    judged = [o for o in overlays if o.kind != "permissive"]
    rejected = dict.fromkeys((o.name for o in judged), 0)
    accepted = 0
    for turn in turns:
        ok = True
        for o in judged:
            if not o.evaluate(turn.context, turn.response).admissible:
                rejected[o.name] += 1
                ok = False
        accepted += ok
    n = max(1, len(turns))
    return accepted / n, {k: v / n for k, v in rejected.items()}


def _fit_tone(turns: Sequence[HumanTurn]) -> tuple[ToneWeights, dict[str, Any]]:
    labelled = [
        (t.response, SENTIMENT_VALENCE[t.sentiment])
        for t in turns
        if t.sentiment is not None and t.sentiment in SENTIMENT_VALENCE
    ]
    if len(labelled) < 30:
        return DEFAULT_RESOURCES.tone, {"source": "defaults", "labelled_turns": len(labelled)}
    weights = fit_tone_weights([t for t, _ in labelled], [y for _, y in labelled])
    return weights, {
        "source": "least squares on topical_chat sentiment labels (calibration split)",
        "turns_read": len(turns),
        "labelled_turns": len(labelled),
        "valence": dict(SENTIMENT_VALENCE),
    }


def _specificity_norms(turns: Sequence[HumanTurn], quantile: float) -> SpecificityNorms:
    table = np.array([counts(t.response) for t in turns], dtype=float)
    if len(table) == 0:
        return DEFAULT_RESOURCES.specificity
    top = np.quantile(table, quantile, axis=0)
    floors = (1.0, 1.0, 1.0, 0.05)  # at least one name, number, descriptive word; 5% rare
    values = [round(max(float(v), f), 3) for v, f in zip(top, floors, strict=True)]
    return SpecificityNorms(*values)


def _rule(
    t: RuleTemplate, turns: Sequence[HumanTurn], res: Resources, q: Mapping[str, float]
) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": t.name, "feature": t.feature, "kind": t.kind}
    spec.update({k: v for k, v in (("condition", t.condition), ("target", t.target)) if v})
    spec.update(scope=t.scope, priority=t.priority)
    probe = overlay_from({**spec, "bounds": {"max": 0.0}, "epsilon": 0.0}, 0, "calibration", res)
    pool = [h for h in turns if len(bot_history(h.context)) + 1 >= _window(t)]
    if t.kind != "permissive":  # a permit widens to what humans reach anywhere, only rarely
        active = [h for h in pool if probe.active(h.context, h.response)]
        pool = active if len(active) >= MIN_CONDITIONED else pool
    values = np.array([probe.value(h.context, h.response) for h in pool], dtype=float)
    hard = t.reject or q["reject"]
    first = hard if t.kind == "permissive" else t.quantile or q["bound"]
    levels = (1 - first, 1 - hard) if t.side == "min" else (first, hard)
    bound, limit = (float(np.quantile(values, level)) for level in levels)
    spec["bounds"] = {t.side: round(bound, 3)}
    spec["epsilon"] = round(abs(limit - bound), 3)
    spec.update({k: v for k, v in (("descriptor", t.descriptor), ("feedback", t.feedback)) if v})
    spec["calibration"] = {
        "turns": len(values),
        "quantile": round(levels[0], 4),
        "reject_quantile": round(levels[1], 4),
        "human_median": round(float(np.median(values)), 3),
        "method": get_feature(t.feature).method_with(res),
    }
    return spec


def _window(t: RuleTemplate) -> int:
    """Turns by the speaker (the reply included) a rule needs before it says anything."""
    if isinstance(t.scope, Mapping) and "last_n" in t.scope:
        return int(t.scope["last_n"])
    return MIN_POINTS if get_feature(t.feature).scope == "trajectory" else 1


def _sizes(turns: Sequence[HumanTurn]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for corpus in sorted({t.corpus for t in turns}):
        mine = [t for t in turns if t.corpus == corpus]
        out[corpus] = {"dialogues": len({t.dialogue for t in mine}), "turns": len(mine)}
    return out


def _file_records(root: Path, corpus: str) -> list[dict[str, Any]]:
    records = []
    for name in corpus_files(corpus):
        data = read_corpus_bytes(root, name)
        records.append(
            {"path": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}
        )
    return records
