"""The small-talk overlay set before calibration: which feature, which side, which words.

Numbers are filled in by :func:`governor.overlays.calibrate.calibrate` from human corpora: a
``max`` rule's bound is the ``bound`` quantile of human values and its hard limit the ``reject``
quantile (epsilon is the gap); a ``min`` rule mirrors this at the low end. A rule's own
``quantile`` replaces the ``bound`` quantile; it moves only the point where implicit feedback
starts, not the hard limit, so human acceptance does not depend on it. The drift rules use 0.75:
a reply that steepens the trend more than a quarter of humans do gets a note and ranks below one
that does not, which is what keeps the trend flat; at 0.95 they almost never speak. Tone is
bounded on both sides: below, negativity; above, gushing (LLM small talk runs more positive than
people's). Condition thresholds are design choices, not estimates: VADER's compound below -0.3
reads as clearly negative, and a request is a yes/no flag.

The degenerate-text rules (repetition, odd symbols, non-words, mixed scripts, markup, echo) catch
a broken model's output, not a style: humans almost never trip them, so their note starts at the
0.99 quantile and their hard limit sits at the 0.999 quantile (``reject``), which keeps a person's
disfluency ("I, I, I think") or a typo from costing a regeneration; what they exist for (symbol
spam, runs of another script, HTML, a verbatim echo) lies far beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class RuleTemplate:
    """One overlay without its numbers (see the loader for the meaning of the fields)."""

    name: str
    feature: str
    side: Literal["min", "max"]
    descriptor: str
    feedback: str
    kind: str = "prohibitory"
    scope: Any = "turn"
    priority: int = 0
    condition: str | None = None
    target: str | None = None
    quantile: float | None = None  # share of human values within the bound, if not the default
    reject: float | None = None  # share of human values within the hard limit, if not the default


SMALL_TALK: tuple[RuleTemplate, ...] = (
    RuleTemplate(
        "brevity",
        "word_count",
        "max",
        "response too long for small talk: {value:.0f} words, humans rarely exceed {max:.0f}",
        "reply in one or two short sentences",
        priority=3,
    ),
    RuleTemplate(
        "detail_on_request",
        "word_count",
        "max",
        "the user asked for detail, so up to {max:.0f} words are fine",
        "",
        kind="permissive",
        condition="user_request >= 1",
        target="brevity",
    ),
    RuleTemplate(
        "assistance",
        "assistance",
        "max",
        "sounds like an assistant offering help, not a conversation partner"
        " (assistance {value:.2f})",
        "do not offer help, lists or information; just chat",
        priority=3,
    ),
    RuleTemplate(
        "unsolicited_advice",
        "advice",
        "max",
        "advice nobody asked for: {value:.0f} sentence(s) telling the user what to do",
        "share a thought or an experience instead of advice",
        priority=3,
    ),
    RuleTemplate(
        "questions",
        "questions",
        "max",
        "too many questions at once: {value:.0f}, humans rarely ask more than {max:.0f}",
        "ask at most one question",
        priority=2,
    ),
    RuleTemplate(
        "specificity",
        "specificity",
        "max",
        "too specific for small talk: {value:.2f} (names, numbers, details),"
        " humans rarely exceed {max:.2f}",
        "drop the names, figures and details; keep it general",
        priority=2,
    ),
    RuleTemplate(
        "tone",
        "tone",
        "min",
        "tone too negative for small talk: {value:.2f}, humans rarely go below {min:.2f}",
        "keep it light and friendly",
        priority=2,
    ),
    RuleTemplate(
        "effusive_tone",
        "tone",
        "max",
        "tone more effusive than small talk: {value:.2f}, humans rarely go above {max:.2f}",
        "tone it down: relaxed and friendly, not gushing",
        priority=2,
    ),
    RuleTemplate(
        "comfort_first",
        "suggestions",
        "max",
        "suggestions while the user sounds upset: {value:.0f} sentence(s)",
        "acknowledge how they feel first, in a sentence or two, without suggestions",
        kind="transfer",
        condition="user_affect < -0.3",
        priority=2,
    ),
    RuleTemplate(
        "recent_brevity",
        "word_count",
        "max",
        "replies have been long for a while: {value:.0f} words on average over the last three,"
        " humans rarely exceed {max:.0f}",
        "keep the next replies short",
        scope={"last_n": 3},
        priority=1,
    ),
    RuleTemplate(
        "length_drift",
        "word_count_drift",
        "max",
        "replies keep getting longer: {value:+.1f} words per turn, most humans stay under {max:+.1f}",
        "bring the length back down to a sentence or two",
        scope="trajectory",
        priority=1,
        quantile=0.75,
    ),
    RuleTemplate(
        "specificity_drift",
        "specificity_drift",
        "max",
        "replies keep getting more specific: {value:+.3f} per turn,"
        " most humans stay under {max:+.3f}",
        "step back from the details; keep it general",
        scope="trajectory",
        priority=1,
        quantile=0.75,
    ),
    *(
        RuleTemplate(
            name, feature, "max", descriptor, feedback, priority=4, quantile=0.99, reject=0.999
        )
        for name, feature, descriptor, feedback in (
            (
                "repetition",
                "repeated_ngrams",
                "repeated words: {value:.0%} of the reply's word triples repeat, humans stay"
                " under {max:.0%}",
                "say it once, without repeating phrases",
            ),
            (
                "repeated_symbols",
                "repeated_symbols",
                "repeated symbols or invisible characters ({value:.0f}), which people never type",
                "write plain words, without symbol runs",
            ),
            (
                "non_words",
                "non_words",
                "non-words: {value:.0%} of the reply is no word of the conversation's language",
                "write in plain words of the language the user speaks",
            ),
            (
                "mixed_scripts",
                "mixed_scripts",
                "mixed scripts: {value:.0%} of the words are in another writing system",
                "write in the user's language and script only",
            ),
            (
                "markup",
                "markup",
                "markup in a chat reply: {value:.0f} tag(s), fence(s) or Markdown mark(s)",
                "write plain conversational text, no HTML or Markdown",
            ),
            (
                "echo",
                "echo",
                "echoes the user's question: {value:.0%} of the reply repeats their words",
                "answer in your own words instead of repeating the user",
            ),
            (
                "instruction_echo",
                "instruction_echo",
                "restates its instructions: {value:.0%} of the reply's words are the prompt's or"
                " the observer's",
                "talk with the user about what they said; leave your instructions unmentioned",
            ),
        )
    ),
    RuleTemplate(  # a flag that 0.1% of people's turns raise (spoken turns cut off): hard at 0
        "stray_tail",
        "stray_tail",
        "max",
        "a stray word after the last sentence, or an unfinished one",
        "end with the sentence; add no stray words after it",
        priority=4,
        quantile=0.99,
        reject=0.998,
    ),
)
