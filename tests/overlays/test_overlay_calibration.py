"""Corpora, calibration with provenance, human acceptance, and LLM-style replies flagged."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from governor.errors import ConfigError
from governor.overlays import (
    CORPORA,
    DEFAULT_OVERLAYS,
    Resources,
    Turn,
    calibrate,
    human_acceptance,
    load_overlays,
    load_resources,
    load_turns,
    split_of,
)
from governor.overlays.corpora import load_dialogues


def user(text: str) -> tuple[Turn, ...]:
    return (Turn("user", text),)


def test_corpora_load_as_turns_with_roles_and_labels(data_dir: Path) -> None:
    turns = load_turns(data_dir, "calibration", max_turns=30)
    assert {t.corpus for t in turns} == set(CORPORA)
    for corpus in CORPORA:
        assert sum(t.corpus == corpus for t in turns) == 30
    for t in turns:
        assert t.response.strip() and 0 < len(t.context) <= 10
        assert t.context[-1].role == "user"  # the other speaker spoke last (or said it before)
    assert any(t.sentiment for t in turns if t.corpus == "topical_chat")
    tiage = next(t for t in turns if t.corpus == "tiage_personachat")
    assert " ," not in tiage.response and " ." not in tiage.response
    switchboard = load_dialogues(data_dir, "switchboard")
    assert len(switchboard) == 36
    assert not any("<" in text for d in switchboard for text in d[2])
    with pytest.raises(ConfigError, match="expected the file"):
        load_dialogues(data_dir / "nowhere", "switchboard")


def test_split_is_deterministic_disjoint_and_seeded(data_dir: Path) -> None:
    calib = load_turns(data_dir, "calibration", max_turns=40)
    held = load_turns(data_dir, "heldout", max_turns=40)
    assert calib == load_turns(data_dir, "calibration", max_turns=40)
    assert not {(t.corpus, t.dialogue) for t in calib} & {(t.corpus, t.dialogue) for t in held}
    for t in held:
        assert split_of(t.corpus, t.dialogue) == "heldout"
    other = load_turns(data_dir, "calibration", max_turns=40, seed=1)
    assert {t.dialogue for t in other} != {t.dialogue for t in calib}


def test_calibration_writes_overlays_with_provenance(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "calibrated.yaml"
    doc = calibrate(data_dir, out, max_turns=60, split_seed=3, quantiles={"bound": 0.9})
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written == doc
    prov = doc["provenance"]
    assert prov["split"]["seed"] == 3 and prov["split"]["fraction"] == 0.5
    assert set(prov["files"]) == set(CORPORA)
    assert all(
        len(f["sha256"]) == 16 and f["bytes"] > 0 for fs in prov["files"].values() for f in fs
    )
    for split in ("calibration", "heldout"):
        sizes = prov["sizes"][split]
        assert set(sizes) == set(CORPORA) and all(s["turns"] == 60 for s in sizes.values())
    assert prov["quantiles"]["bound"] == 0.9 and prov["quantiles"]["reject"] == 0.995
    assert prov["tone_fit"]["labelled_turns"] >= 30
    assert 0.0 <= prov["heldout_acceptance"]["accepted"] <= 1.0
    overlays = load_overlays(out)
    assert {o.name for o in overlays} >= {"brevity", "assistance", "questions", "tone"}
    for rule in doc["overlays"]:
        assert rule["epsilon"] >= 0 and rule["calibration"]["turns"] > 0
    brevity = next(r for r in doc["overlays"] if r["name"] == "brevity")
    assert brevity["calibration"]["quantile"] == 0.9 and brevity["bounds"]["max"] > 5
    tone = next(r for r in doc["overlays"] if r["name"] == "tone")
    assert tone["calibration"]["quantile"] == pytest.approx(0.1) and "min" in tone["bounds"]


def test_shipped_overlays_record_their_calibration() -> None:
    doc = yaml.safe_load(DEFAULT_OVERLAYS.read_text(encoding="utf-8"))
    assert doc["provenance"]["heldout_acceptance"]["accepted"] >= 0.95
    assert doc["provenance"]["split"]["seed"] == 0
    overlays = load_overlays()
    kinds = {o.kind for o in overlays}
    assert kinds == {"prohibitory", "transfer", "permissive"}


def test_the_recorded_human_acceptance_is_recomputed_from_the_held_out_turns(
    data_dir: Path,
) -> None:
    """The shipped file's own figure (the README's 96.7% of 6,000) against a recount: every 4th
    held-out turn of the recorded split, each judged by every non-permissive overlay directly."""
    doc = yaml.safe_load(DEFAULT_OVERLAYS.read_text(encoding="utf-8"))
    split, recorded = doc["provenance"]["split"], doc["provenance"]["heldout_acceptance"]
    turns = load_turns(
        data_dir,
        "heldout",
        seed=split["seed"],
        fraction=split["fraction"],
        max_turns=split["max_turns"],
    )
    assert len(turns) == sum(s["turns"] for s in doc["provenance"]["sizes"]["heldout"].values())
    judged = [o for o in load_overlays() if o.kind != "permissive"]
    sample = turns[::4]
    accepted = sum(
        all(o.evaluate(t.context, t.response).admissible for o in judged) for t in sample
    )
    # 1,500 turns: a standard error of 0.45 points at 97%
    assert accepted / len(sample) == pytest.approx(recorded["accepted"], abs=0.015)
    assert accepted / len(sample) >= 0.95


def test_humans_are_accepted_on_the_held_out_split(data_dir: Path) -> None:
    turns = load_turns(data_dir, "heldout", max_turns=400)
    rate, per_overlay = human_acceptance(load_overlays(), turns)
    assert rate >= 0.95, per_overlay
    assert all(fp <= 0.02 for fp in per_overlay.values()), per_overlay


WALK = user("I just got back from a walk, it's lovely out.")
LLM_REPLIES = [
    (
        "tips",
        WALK,
        "Great question! Here are some tips: 1) Sleep in and recharge. 2) Try a new hiking"
        " trail nearby. 3) Catch up with friends over brunch. Let me know if you'd like more"
        " suggestions!",
        {"assistance", "unsolicited_advice"},
    ),
    (
        "long",
        user("How was your day?"),
        "My day has been quite interesting, thank you for asking! I spent a good part of the"
        " morning thinking about how people spend their weekends and what makes a day feel"
        " restful versus busy. It seems that many people enjoy a mix of activity and relaxation,"
        " like going for a walk in the park, reading a good book, or cooking a nice meal at home."
        " In the afternoon I reflected on how small moments, like a warm cup of coffee or a"
        " friendly chat, can really brighten a day. How about you, how has your day been so far?",
        {"brevity"},
    ),
    (
        "specific",
        user("I went to a museum yesterday."),
        "The Louvre in Paris houses 35,000 artworks, including Leonardo da Vinci's Mona Lisa,"
        " painted between 1503 and 1519, and the Venus de Milo, discovered in 1820 on Milos.",
        {"specificity"},
    ),
    (
        "advice",
        user("Work was busy today."),
        "You should try taking short breaks every hour. Make sure you drink enough water, and"
        " consider a walk after lunch.",
        {"unsolicited_advice"},
    ),
    (
        "questions",
        WALK,
        "Oh nice! Where did you go? Who did you go with? What was the best part? Would you go"
        " again?",
        {"questions"},
    ),
    (
        "assistant",
        user("Just making conversation."),
        "I'd be happy to help with anything you need! Feel free to ask me about any topic.",
        {"assistance"},
    ),
    (
        "upset",
        user("My dog died yesterday and I feel terrible. What should I do?"),
        "I'm so sorry. You might try writing down your favourite memories of your dog.",
        {"comfort_first"},
    ),
]
HUMAN_REPLIES = [
    (WALK, "Oh nice, I love walks when it's like that."),
    (user("Did you watch the game last night?"), "Yeah! That last quarter was crazy."),
    (user("My dog died yesterday."), "Oh no, I'm so sorry. How old was he?"),
    (user("Any plans for the weekend?"), "Not really, probably just relaxing. You?"),
]


@pytest.mark.parametrize(
    ("context", "reply", "flags"), [c[1:] for c in LLM_REPLIES], ids=[c[0] for c in LLM_REPLIES]
)
def test_llm_style_replies_are_flagged_by_the_right_overlays(
    context: tuple[Turn, ...], reply: str, flags: set[str]
) -> None:
    rejected = {o.name for o in load_overlays() if not o.evaluate(context, reply).admissible}
    assert flags <= rejected, rejected


@pytest.mark.parametrize(("context", "reply"), HUMAN_REPLIES)
def test_human_style_replies_pass(context: tuple[Turn, ...], reply: str) -> None:
    verdicts = [o.evaluate(context, reply) for o in load_overlays()]
    assert all(v.admissible for v in verdicts), [v for v in verdicts if not v.admissible]


def test_calibrated_resources_load_with_the_overlays() -> None:
    res = load_resources()
    assert res == load_overlays()[0].resources
    assert res.tone != Resources().tone and res.specificity.proper_nouns >= 1
