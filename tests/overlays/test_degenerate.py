"""Degenerate text: a base model's symbol spam, mixed scripts, markup and echoes are rejected by
the shipped overlays, human replies are not, and CJK text is counted by character."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from governor.overlays import (
    DEFAULT_OVERLAYS,
    Turn,
    human_acceptance,
    load_overlays,
    load_turns,
    measure,
)
from governor.overlays.features import degenerate as d
from governor.overlays.features import instructions
from governor.overlays.features.text import words
from governor.overlays.loader import EMBED_OVERLAYS
from governor.overlays.rules import Overlay

NAMES = (
    "repetition",
    "repeated_symbols",
    "non_words",
    "mixed_scripts",
    "markup",
    "echo",
    "instruction_echo",
    "stray_tail",
)
QUESTION = "What do you usually like to do on the weekends?"


def user(text: str) -> tuple[Turn, ...]:
    return (Turn("user", text),)


@pytest.fixture(scope="module")
def degenerate_overlays() -> list[Overlay]:
    return [o for o in load_overlays() if o.name in NAMES]


def rejected_by(overlays: list[Overlay], context: tuple[Turn, ...], reply: str) -> set[str]:
    return {o.name for o in overlays if not o.evaluate(context, reply).admissible}


@pytest.mark.parametrize(
    ("reply", "expected", "descriptor"),
    [
        ("Je pense que les prochains ↦ ↦ ↦", "repeated_symbols", "repeated symbols"),
        ("我可以 süreçmodel … 査査査", "mixed_scripts", "mixed scripts"),
        ("Oh nice, I went there too ■■■■■ last year", "repeated_symbols", "repeated symbols"),
        ("Sounds\u200b good\u200b to\u200b me", "repeated_symbols", "invisible"),
        ("<div>I like to go hiking on the weekends.</div>", "markup", "markup"),
        ("```python\nprint('I like hiking')\n```", "markup", "markup"),
        ("## Weekend plans\n**Hiking** is great.", "markup", "markup"),
        (QUESTION, "echo", "echoes the user's question"),
        (f"{QUESTION} I like hiking.", "echo", "echoes the user's question"),
        (
            "I like hiking a lot, I like hiking a lot, I like hiking a lot, I like hiking a lot.",
            "repetition",
            "repeated words",
        ),
        (
            "Flibber zorgle quintaplex wumbo snargle frimp blorptastic on the weekends.",
            "non_words",
            "non-words",
        ),
        ("Mне нравится hiking и походы в горы", "mixed_scripts", "mixed scripts"),
        ("A: Miley Cyrus, I think.", "markup", "markup"),  # a transcript's speaker tag
        ("I had a great time. audienciasetInput", "markup", "markup"),  # a glued code identifier
        ("It was really fun, it was a good time. audiencia", "stray_tail", "stray word"),
        ("Well, I like Miranda Lambert. mendatang", "stray_tail", "stray word"),
        ("I would say Miranda Lambert. Kemudian", "stray_tail", "stray word"),
        ("I noticed the newspaper was out of print. bloodstream", "stray_tail", "stray word"),
        ("Did you think the team was going to change their policy?perluan", "stray_tail", "stray"),
        ("That's not the case at all.compared", "stray_tail", "stray word"),
        ('I\'m watching "American Horror Story." süreç', "stray_tail", "stray word"),
        ("You can meet up to see if you can do it. Prozesse", "stray_tail", "stray word"),
        ("Somehow, she's my own. INTERVALS", "stray_tail", "stray word"),
        ("And I like listening to them. matters", "stray_tail", "stray word"),
        ("It's sung by Dwayne Johnson. SUBSCRIBE", "stray_tail", "stray word"),
        ("I have no idea about the numbers. Performs", "stray_tail", "stray word"),
        ("No, I never throw it. Somehow, I think that's the", "stray_tail", "unfinished"),
        ("Oh, I think the U. is the only place where it's.", "stray_tail", "unfinished"),
        ('I thought they were two of the best actors in the world!(".",', "stray_tail", "stray"),
        ('Oh, well, I saw that, my mother was crying for it.="))', "stray_tail", "stray"),
        (
            "Yeah, she's got some fine lines. Somehow, you're going to have a long time."
            " Somehow, you're going to have a long time.",
            "repetition",
            "repeated",
        ),
        (
            "Alright, we're excited to have you. Alright, what's the story?Alright.",
            "stray_tail",
            "",
        ),
        ("I have a question, if you don't mind..." + "$" * 80, "repeated_symbols", "repeated"),
        ("Well, that's like what I'm used to in the big cities.yaml", "markup", "markup"),
        (
            "Do you remember that? 5.04.14ArgumentParser ArgumentParserArgumentParser",
            "non_words",
            "non-words",
        ),
    ],
)
def test_degenerate_replies_are_rejected_and_named(
    degenerate_overlays: list[Overlay], reply: str, expected: str, descriptor: str
) -> None:
    context = user(QUESTION)
    assert expected in rejected_by(degenerate_overlays, context, reply)
    verdict = next(o for o in degenerate_overlays if o.name == expected).evaluate(context, reply)
    assert descriptor in verdict.descriptor


@pytest.mark.parametrize(
    "reply",
    [
        "I, I, I think so, yeah.",
        "Sooo good!!! I loved it...",
        "Haha, yeah. I mostly go hiking with my dog, Biscuit.",
        "On weekends? Mostly hiking. What about you?",
        "I was in Paris in 2019 <3 it was lovely.",
        "I like to go hiking on the weekends, and you?",
        "Je fais de la randonnée le week-end.",
        "We grew up in the 1990s, and I got my iPhone on the 4th at 5pm.",
        "I sell old PowerPoint decks on eBay and chat on WhatsApp.",
        "Exactly. lol",
        "What a finish. insane",
        "Is that like going wassailing? hahahaa",
        "That was a riot...lol",
        "I loved him when he played on ER as Dr. Ross",
        "What are you looking for",
        "Oh no :(",
        "They earn more money in their lifetime than an NFL player....crazy!",
        "It depends on the difference in the atmosphere on Mars vs. Earth",
        "I loved it (really!)...",
        "It's fine, that's what it's for. I'd say so!",
        "That was great. LOL",
        "Oh, I see. interesting",
        "We watched The Sixth Sense. Shyamalan",
        "That was great. haha!",
        "I read it on example.com",
        "It was version 3.5, I think.",
        "For me that's easy.........the Pats.",
        "I have a turtle. His name is Shelly.",
        "Haha. Anyway, how was yours?",
    ],
)
def test_ordinary_replies_pass(degenerate_overlays: list[Overlay], reply: str) -> None:
    assert rejected_by(degenerate_overlays, user(QUESTION), reply) == set()


def test_a_sample_of_human_turns_is_admitted(
    data_dir: Path, degenerate_overlays: list[Overlay]
) -> None:
    turns = load_turns(data_dir, "heldout", max_turns=150)
    rate, per_overlay = human_acceptance(degenerate_overlays, turns)
    assert set(per_overlay) == set(NAMES)
    assert rate >= 0.99, per_overlay


@pytest.mark.parametrize("path", [DEFAULT_OVERLAYS, EMBED_OVERLAYS])
def test_both_shipped_files_carry_the_calibrated_overlays(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    held = doc["provenance"]["heldout_acceptance"]
    assert held["accepted"] >= 0.95
    rules = {r["name"]: r for r in doc["overlays"]}
    for name in NAMES:
        assert rules[name]["kind"] == "prohibitory"
        hard = 0.998 if name == "stray_tail" else 0.999  # a flag some spoken turns raise
        assert rules[name]["calibration"]["reject_quantile"] == hard
        assert rules[name]["epsilon"] == 0.0 or name not in ("stray_tail", "mixed_scripts")
        assert 1 - held["false_positive"][name] >= 0.95


def test_a_tail_that_recurs_from_an_earlier_reply_is_a_tic(
    degenerate_overlays: list[Overlay],
) -> None:
    before = (
        *user("Hello - how are you doing today?"),
        Turn("assistant", "I'm fine. Tickets model"),
    )
    context = (*before, *user("Do you like soccer?"))
    assert "stray_tail" in rejected_by(
        degenerate_overlays, context, "They won. Tickets model anaknya"
    )
    assert "stray_tail" in rejected_by(degenerate_overlays, context, "It's great! Tickets model")
    assert rejected_by(degenerate_overlays, context, "Yes. I wonder who won") == set()
    said = (*user("Hi!"), Turn("assistant", "Great game. I wonder who won"), *user("Me too."))
    assert rejected_by(degenerate_overlays, said, "Sure. I wonder how they train") == set()


def test_cjk_characters_count_as_words() -> None:
    assert words("我可以 süreçmodel … 査査査") == ["我", "可", "以", "süreçmodel", "査", "査", "査"]
    assert measure("word_count", (), "今日はいい天気ですね").value == 10
    assert measure("word_count", (), "naïve café, don't worry").value == 4
    assert words("안녕하세요 친구") == ["안녕하세요", "친구"]  # Hangul is written with spaces


def test_feature_values() -> None:
    assert d.symbol_repeats("Wow!!! Really... ok?") == 0  # ordinary punctuation
    assert d.symbol_repeats("prochains ↦ ↦ ↦") == 2
    assert d.symbol_repeats("a → b") == 0
    assert d.symbol_repeats("a\u200bb") == 1
    assert d.repeated_share("one two three one two three") == 0.25
    assert d.repeated_share("one two three four") == 0.0
    assert d.foreign_script_share("hello мир friend") == pytest.approx(1 / 3)
    assert d.foreign_script_share("日本語とカタカナ") == 0.0  # one family
    assert d.markup_count("I <3 you, 2 < 3 > 1") == 0
    assert d.markup_count('<a href="x">hi</a> [link](http://x.y)') == 3
    assert d.echo_share(QUESTION, QUESTION) == 1.0
    assert d.echo_share("I like dogs too", "I like dogs") == 0.0
    # names inside a sentence and numbers are not non-words; short replies divide by MIN_WORDS
    assert d.non_word_share("I met Zxqvbn in 1999.") == 0.0
    assert d.non_word_share("Zxqvbn.") == 1 / d.MIN_WORDS


def test_the_conversation_language_decides_what_is_a_word() -> None:
    french = user("Bonjour, comment ça va aujourd'hui ? Je suis très fatigué.")
    assert d.language(french) == "fr"
    assert d.language(user("How are you doing today?")) == "en"
    assert d.language(()) == "en"
    reply = "Habituellement, des randonnées pittoresques avec mes copains, et toi ?"
    assert measure("non_words", french, reply).value == 0.0
    assert measure("non_words", user("Hi!"), reply).value == pytest.approx(4 / 9)  # in English


PARAPHRASED_LEAKS = (
    "my supervisor rejected my proposal",  # seen on the real model
    "Sorry, my supervisor says I should keep it short and not give advice.",
    "I'm a friendly companion for casual small talk!",
    "Thanks for the note, I'll keep my next replies short.",
    "Got it, no names or numbers, I'll keep it general.",
    "My reply was not accepted, so I'll propose a different one.",
)


@pytest.mark.parametrize("reply", PARAPHRASED_LEAKS)
def test_a_reply_restating_its_instructions_is_rejected(
    degenerate_overlays: list[Overlay], reply: str
) -> None:
    assert "instruction_echo" in rejected_by(degenerate_overlays, user(QUESTION), reply)
    reordered = " ".join(reversed(reply.rstrip(".!").split()))  # a bag of words: order is moot
    assert measure("instruction_echo", user(QUESTION), reordered).value == pytest.approx(
        measure("instruction_echo", user(QUESTION), reply).value
    )


def test_instruction_words_the_user_said_are_not_an_echo() -> None:
    reply = "Your supervisor rejected your proposal? That is rough."
    about_work = user("My supervisor rejected my proposal at work today.")
    assert measure("instruction_echo", user(QUESTION), reply).value >= 0.4
    assert measure("instruction_echo", about_work, reply).value == 0.0
    assert instructions.instruction_share("Keep it light!") == 2 / instructions.MIN_STEMS


def test_the_vocabulary_covers_what_the_model_is_told() -> None:
    from governor.conversation.llm_policy import EXAMPLES_HEADER, NOTE, SYSTEM_PROMPT
    from governor.feedback import LLMFeedbackWriter, TemplateFeedbackWriter
    from governor.overlays.features.text import STOPWORDS, stem, zipf

    told = [SYSTEM_PROMPT, EXAMPLES_HEADER, *NOTE.values(), LLMFeedbackWriter.PROMPT]
    told += TemplateFeedbackWriter().templates.values()
    vocabulary = instructions.instruction_vocabulary()
    for text in told:
        telling = [
            w
            for w in words(re.sub(r"\{\w*\}", " ", text))  # without the template slots
            if w.lower() not in STOPWORDS and len(w) > 1 and zipf(w) < instructions.COMMON
        ]
        missing = [w for w in telling if stem(w) not in vocabulary]
        assert telling and not missing, (text, missing)
