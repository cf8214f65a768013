"""Human conversation corpora as (context, response) turns, with a deterministic split.

Each dialogue goes wholly to one split, chosen by a hash of (seed, corpus, dialogue id), so the
calibration and held-out splits never share a conversation. Within a split, dialogues are taken
in hash order until ``max_turns`` responses are collected (a deterministic subsample). A response
is a turn whose previous turn is by the other speaker; in its context the responder's earlier
turns have role ``assistant`` and the other speaker's ``user``.

Files read under ``data_dir`` (the ``conversations`` folder of the shared data):
``switchboard.zip`` (``switchboard/transcript``), ``self_dialogue.jsonl``,
``tiage_personachat/anno_{train,dev,test}.json``, ``topical_chat/{valid,test}_{freq,rare}.json``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from governor.errors import ConfigError, expected
from governor.overlays.features.dialogue import Turn

CORPORA = ("switchboard", "self_dialogue", "tiage_personachat", "topical_chat")
SplitName = Literal["calibration", "heldout"]
# (dialogue id, speaker per turn, text per turn, sentiment label per turn)
RawDialogue = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str | None, ...]]

_FILES = {
    "switchboard": ("switchboard.zip",),
    "self_dialogue": ("self_dialogue.jsonl",),
    "tiage_personachat": tuple(
        f"tiage_personachat/anno_{s}.json" for s in ("train", "dev", "test")
    ),
    "topical_chat": tuple(
        f"topical_chat/{s}_{k}.json" for s in ("valid", "test") for k in ("freq", "rare")
    ),
}


@dataclass(frozen=True)
class HumanTurn:
    """One human response with the dialogue before it (at most ``context_turns`` turns)."""

    corpus: str
    dialogue: str
    index: int
    context: tuple[Turn, ...]
    response: str
    sentiment: str | None = None


def corpus_files(corpus: str) -> tuple[str, ...]:
    """The files of ``corpus``, relative to the data directory."""
    if corpus not in _FILES:
        raise ConfigError(f"corpus: {expected(' or '.join(CORPORA), corpus)}")
    return _FILES[corpus]


def split_of(corpus: str, dialogue: str, *, seed: int = 0, fraction: float = 0.5) -> SplitName:
    """Which split a dialogue belongs to: ``calibration`` for a ``fraction`` of dialogues."""
    return "calibration" if _rank(seed, corpus, dialogue) < fraction else "heldout"


def load_turns(
    data_dir: str | Path,
    split: SplitName,
    *,
    seed: int = 0,
    fraction: float = 0.5,
    max_turns: int = 1500,
    corpora: Sequence[str] = CORPORA,
    context_turns: int = 10,
) -> list[HumanTurn]:
    """Up to ``max_turns`` responses per corpus from ``split`` (each corpus weighs the same)."""
    if split not in ("calibration", "heldout"):
        raise ConfigError(f"split: {expected('calibration or heldout', split)}")
    out: list[HumanTurn] = []
    for corpus in corpora:
        dialogues = [
            d
            for d in load_dialogues(data_dir, corpus)
            if split_of(corpus, d[0], seed=seed, fraction=fraction) == split
        ]
        dialogues.sort(key=lambda d: _rank(seed + 1, corpus, d[0]))
        taken = 0
        for dialogue_id, speakers, texts, labels in dialogues:
            for i in range(1, len(texts)):
                if taken >= max_turns:
                    break
                if speakers[i - 1] == speakers[i]:  # a continuation, not a response
                    continue
                start = max(0, i - context_turns)
                context = tuple(
                    Turn("assistant" if speakers[j] == speakers[i] else "user", texts[j])
                    for j in range(start, i)
                )
                out.append(HumanTurn(corpus, dialogue_id, i, context, texts[i], labels[i]))
                taken += 1
            if taken >= max_turns:
                break
    return out


def corpus_path(data_dir: str | Path, name: str) -> Path:
    """The stored file of the corpus file ``name``: as named, or gzip-compressed beside it."""
    plain = Path(data_dir) / name
    packed = plain.with_name(plain.name + ".gz")
    if plain.is_file() or not packed.is_file():
        return plain
    return packed


def read_corpus_bytes(data_dir: str | Path, name: str) -> bytes:
    """The content of the corpus file ``name`` (decompressed when it is stored as ``.gz``)."""
    path = corpus_path(data_dir, name)
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.suffix == ".gz" else data
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ConfigError(f"{path}: {expected('a readable corpus file', str(exc))}") from exc


def load_dialogues(data_dir: str | Path, corpus: str) -> tuple[RawDialogue, ...]:
    """All dialogues of ``corpus`` (memoised per directory)."""
    for name in corpus_files(corpus):
        if not corpus_path(data_dir, name).is_file():
            wanted = f"the file {Path(data_dir) / name} (or {name}.gz)"
            raise ConfigError(f"{corpus}: {expected(wanted, 'none')}")
    return _load(str(Path(data_dir).resolve()), corpus)


def _rank(seed: int, corpus: str, dialogue: str) -> float:
    digest = hashlib.sha256(f"{seed}:{corpus}:{dialogue}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@lru_cache(maxsize=8)
def _load(root: str, corpus: str) -> tuple[RawDialogue, ...]:
    base = Path(root)
    if corpus == "switchboard":
        with zipfile.ZipFile(base / "switchboard.zip") as z:
            return _switchboard(z.read("switchboard/transcript").decode("utf-8", "replace"))
    if corpus == "self_dialogue":
        rows = []
        for line in _text(base, "self_dialogue.jsonl").splitlines():
            if line.strip():
                d = json.loads(line)
                turns = tuple(_clean(t) for t in d["turns"])
                rows.append(_alternating(str(d["id"]), turns))
        return tuple(rows)
    if corpus == "tiage_personachat":
        rows = []
        for name in _FILES[corpus]:
            data = json.loads(_text(base, name))
            for key, turns in data.items():
                texts = tuple(_detokenize(t[0]) for t in turns)
                rows.append(_alternating(f"{Path(name).stem}-{key}", texts))
        return tuple(rows)
    rows = []
    for name in _FILES["topical_chat"]:
        data = json.loads(_text(base, name))
        for key, conv in data.items():
            content = [m for m in conv["content"] if _clean(m["message"])]
            rows.append(
                (
                    key,
                    tuple(m["agent"] for m in content),
                    tuple(_clean(m["message"]) for m in content),
                    tuple(m.get("sentiment") or None for m in content),
                )
            )
    return tuple(rows)


def _text(base: Path, name: str) -> str:
    raw = read_corpus_bytes(base, name)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"{base / name}, byte {exc.start}"
        raise ConfigError(
            f"{where}: {expected('UTF-8 text', repr(raw[exc.start : exc.start + 8]))}"
        ) from exc


def _alternating(dialogue_id: str, texts: tuple[str, ...]) -> RawDialogue:
    kept = tuple(t for t in texts if t)
    return (dialogue_id, tuple("AB"[i % 2] for i in range(len(kept))), kept, (None,) * len(kept))


_SWB_TURN = re.compile(r"^([AB])\.\d+:\s?(.*)$")


def _switchboard(text: str) -> tuple[RawDialogue, ...]:
    """Conversations are separated by blank lines; a line without ``A.n:`` continues a turn."""
    dialogues: list[RawDialogue] = []
    for k, block in enumerate(re.split(r"\n\s*\n", text)):
        speakers: list[str] = []
        texts: list[str] = []
        for line in block.splitlines():
            m = _SWB_TURN.match(line)
            if m:
                speakers.append(m.group(1))
                texts.append(m.group(2))
            elif texts and line.strip():
                texts[-1] += " " + line
        pairs = [
            (s, _clean(re.sub(r"<[^>]*>", " ", t))) for s, t in zip(speakers, texts, strict=True)
        ]
        pairs = [(s, t) for s, t in pairs if t.strip(" -.,")]
        if len(pairs) > 1:
            dialogues.append(
                (
                    f"sw-{k}",
                    tuple(s for s, _ in pairs),
                    tuple(t for _, t in pairs),
                    (None,) * len(pairs),
                )
            )
    return tuple(dialogues)


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _detokenize(text: str) -> str:
    """Undo PersonaChat's spaced tokens ("i am good , thanks ." -> "i am good, thanks.")."""
    text = _clean(text)
    text = re.sub(r" ([,.!?;:])", r"\1", text)
    text = re.sub(r" (n't|'s|'m|'re|'ve|'ll|'d)\b", r"\1", text)
    return text
