"""`governor bench embed-speed`: the small-talk observer's time per turn and coherence's AUC, per
embedding: none (lexical proxies), the MiniLM transformer on torch and on ONNX Runtime (fp32, and
dynamically quantised int8; each candidate encoded when a feature first asks, or with
``-batched`` all candidates of an attempt at once, in batches of similar length), its
distilled static table, and the static table learned in context from the corpora's calibration
split (``static-learned``, :mod:`governor.overlays.embed.learned_table`).

Time: the observer around the offline retrieval responder (not a model), ``candidates`` replies
per attempt, users replaying held-out human openings; a turn's guard time is its wall time minus
the responder's own, so a batch encoded right after the proposal counts as guard time; attempts
per turn (regenerations add attempts) and time per attempt are reported beside it. Each
embedding starts with an empty memo (the encoder's texts and coherence's pairs), after the text
resources (tagger, word frequencies, VADER) are loaded, and uses the overlays calibrated with the
transformer (``smalltalk_embed.yaml``), so a static embedding also changes which candidates pass.
AUC: 1 - coherence ranks TIAGE's human topic-shift labels (PersonaChat, the held-out dialogues of
the corpus split) against non-shifts.

It lives with the small-talk world, not in :mod:`governor.bench`: its time is measured on this
world's conversations (the retrieval responder, the replayed human openings, the world's corpora
settings), so it needs the world, and the runtime benchmarks import none.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.config import check_range, option
from governor.conversation.chat import ChatSession
from governor.conversation.small_talk import SmallTalkConfig, small_talk_observer
from governor.core import Candidate, Feedback, Policy, Trajectory
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.overlays.corpora import _detokenize, read_corpus_bytes, split_of
from governor.overlays.features.base import Embed, Resources, get_feature
from governor.overlays.features.dialogue import Turn, as_dialogue
from governor.overlays.features.text import warm_up
from governor.overlays.loader import DEFAULT_OVERLAYS, EMBED_OVERLAYS, load_overlays
from governor.worlds.smalltalk.responder import RetrievalResponder
from governor.worlds.smalltalk.settings import conversations_dir
from governor.worlds.smalltalk.user_sim import human_openings

METHODS = (
    "offline",
    "transformer",
    "transformer-batched",
    "onnx",
    "onnx-batched",
    "onnx-int8",
    "onnx-int8-batched",
    "static",
    "static-learned",
)
TIAGE = tuple(f"tiage_personachat/anno_{s}.json" for s in ("train", "dev", "test"))


@dataclasses.dataclass(frozen=True)
class EmbedSpeedConfig:
    """What `governor bench embed-speed` runs."""

    methods: str = option(",".join(METHODS), f"comma-separated, of {', '.join(METHODS)}")
    conversations: int = option(5, "timed conversations per method")
    turns: int = option(6, "bot turns per conversation")
    candidates: int = option(6, "candidate replies per attempt")
    auc_pairs: int = option(1000, "held-out TIAGE turn pairs for the AUC (0: all 3,356)")
    seed: int = option(0, "seed of the openings and of the AUC subsample")
    data: str | None = option(None, "the corpora folder (default: the shared data)")

    def __post_init__(self) -> None:
        methods(self.methods)
        check_range("conversations", self.conversations, 1, 1000)
        check_range("turns", self.turns, 1, 100)
        check_range("candidates", self.candidates, 1, 16)
        check_range("auc_pairs", self.auc_pairs, 0, 1_000_000)


def methods(text: str) -> list[str]:
    """The methods named in ``text``."""
    out = [m.strip() for m in text.split(",") if m.strip()]
    if not out or any(m not in METHODS for m in out):
        raise ConfigError(f"methods: {expected('some of ' + ', '.join(METHODS), text)}")
    return out


def shift_pairs(data: Path, limit: int = 0, seed: int = 0) -> list[tuple[str, str, int]]:
    """(previous turn, turn, 1 if a topic shift) of the held-out TIAGE dialogues."""
    from governor.files import json_loads

    pairs = []
    for name in TIAGE:
        for key, turns in json_loads(read_corpus_bytes(data, name)).items():
            if split_of("tiage_personachat", f"{Path(name).stem}-{key}") != "heldout":
                continue
            texts = [_detokenize(t[0]) for t in turns]
            pairs += [
                (texts[i - 1], texts[i], int(turns[i][1]))
                for i in range(1, len(turns))
                if turns[i][1] in ("0", "1")
            ]
    if limit and limit < len(pairs):
        rank = [hashlib.sha256(f"{seed}:{a}\x1e{b}".encode()).digest() for a, b, _ in pairs]
        pairs = [p for _, p in sorted(zip(rank, pairs, strict=True))[:limit]]
    return pairs


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The probability that a random positive outscores a random negative (ties count half)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    pos = [r for r, y in zip(ranks, labels, strict=True) if y]
    n_pos, n_neg = len(pos), len(labels) - len(pos)
    if not n_pos or not n_neg:
        return float("nan")
    return float((sum(pos) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


class _TimedPolicy(Policy):
    """The responder, its own time added up; with ``prefetch``, candidates encoded in one batch."""

    def __init__(self, inner: Policy, prefetch: Callable[[Sequence[str]], None] | None) -> None:
        self.inner, self.prefetch, self.seconds = inner, prefetch, 0.0
        self.name = inner.name

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        start = time.perf_counter()
        out = list(self.inner.propose(traj, feedback, n))
        self.seconds += time.perf_counter() - start
        if self.prefetch is not None:
            texts = [c.action for c in out if isinstance(c.action, str)]
            self.prefetch(texts + [t.text for t in as_dialogue(traj)[-1:]])
        return out


def _embedding(method: str, data: Path) -> Embed | None:
    from governor.overlays.features import coherence

    coherence.forget()
    if method == "offline":
        return None
    if method == "static":
        from governor.overlays.embed.static import static_embed

        return static_embed()
    if method == "static-learned":
        from governor.overlays.embed.learned_table import load

        return load(data)
    from governor.overlays.embed import minilm as local

    model: local.LocalEmbed | local.OnnxEmbed
    if method.startswith("transformer"):
        model = local.torch_embed()
    else:
        model = local.onnx_embed(quantised=method.startswith("onnx-int8"))
    model.prefetch(["a first pass, so that no row pays the runtime's warm-up"])
    model.clear()
    return model


def measure(method: str, cfg: EmbedSpeedConfig, data: Path, pairs: Sequence[Any]) -> dict[str, Any]:
    """One method's guard milliseconds per turn and AUC."""
    embed = _embedding(method, data)
    warm_up()  # the text resources load once per process, not on some method's first turn
    overlays = load_overlays(EMBED_OVERLAYS if embed else DEFAULT_OVERLAYS, embed=embed)
    prefetch = getattr(embed, "prefetch", None) if method.endswith("-batched") else None
    policy = _TimedPolicy(RetrievalResponder.from_corpora(data, seed=cfg.seed), prefetch)
    small_talk = SmallTalkConfig(n_candidates=cfg.candidates, seed=cfg.seed)
    observer = small_talk_observer(policy, overlays, config=small_talk)
    ms: list[float] = []
    attempts = 0
    for user in human_openings(data, cfg.conversations, cfg.turns, seed=cfg.seed):
        session = ChatSession(observer, episode=user.name)
        for _ in range(cfg.turns):
            said = user.next_turn(session.dialogue)
            if said is None:
                break
            before = policy.seconds
            result = session.respond(said)
            ms.append(1000 * (result.seconds - (policy.seconds - before)))
            attempts += len(result.decision.attempts)
    coherence, res = get_feature("coherence").fn, Resources(embed=embed)
    scores = [1.0 - coherence((Turn("user", a),), b, res=res) for a, b, _ in pairs]
    return {
        "method": method,
        "ms_per_turn_p50": statistics.median(ms),
        "ms_per_turn_mean": statistics.fmean(ms),
        "turns": len(ms),
        "attempts_per_turn": attempts / max(1, len(ms)),
        "ms_per_attempt": sum(ms) / max(1, attempts),
        "auc": auc(scores, [y for *_, y in pairs]),
        "auc_pairs": len(pairs),
        "coherence_method": get_feature("coherence").method_with(res),
    }


def run(cfg: EmbedSpeedConfig) -> dict[str, Any]:
    """``{"config", "rows": [one per method]}``."""
    data = Path(cfg.data) if cfg.data else conversations_dir()
    pairs = shift_pairs(data, cfg.auc_pairs, cfg.seed)
    rows = [measure(m, cfg, data, pairs) for m in methods(cfg.methods)]
    return {"config": dataclasses.asdict(cfg), "rows": rows}


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Header and one row per method."""
    yield [
        "embedding",
        "guard ms/turn (median)",
        "mean",
        "attempts/turn",
        "ms/attempt",
        "AUC",
        "pairs",
    ]
    for r in result["rows"]:
        yield [
            r["method"],
            f"{r['ms_per_turn_p50']:.1f}",
            f"{r['ms_per_turn_mean']:.1f}",
            f"{r['attempts_per_turn']:.2f}",
            f"{r['ms_per_attempt']:.1f}",
            f"{r['auc']:.3f}",
            str(r["auc_pairs"]),
        ]


def add_parser(bench: Subcommands) -> None:
    """`governor bench embed-speed`."""
    p = bench.add_parser("embed-speed", help="small-talk guard time per turn and AUC per embedding")
    add_dataclass_args(p, EmbedSpeedConfig)
    p.add_argument("--json", type=Path, help="write the results here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    result = run(dataclass_from_args(EmbedSpeedConfig, args))
    c = result["config"]
    title = f"small-talk guard time ({c['candidates']} candidates) and topic-shift AUC"
    print_table(console, title, list(table_lines(result)))
    if args.json is not None:
        write_json(args.json, result)
    return 0
