"""Lexical cues of a support conversation's turns, read by the user models and the crisis checks.

:func:`cues` scores one turn for stated intent to harm oneself, hopelessness, low mood, support,
dismissal and a crisis-protocol offer (each in [0, 1]); :func:`distress` maps the user's last turn
to a starting risk level. The detectors are short phrase lists as regular expressions over at
most ``MAX_TURN_CHARS`` characters (linear in the input); they are cues for simulation, not a
clinical screen.
"""

from __future__ import annotations

import re

from governor.overlays.features.dialogue import MAX_TURN_CHARS, Dialogue, last

_FLAGS = re.I
INTENT = re.compile(
    r"\b(already decided|end it all|end my life|kill myself|made up my mind|have a plan"
    r"|won'?t be here|say goodbye)\b",
    _FLAGS,
)
HOPELESS = re.compile(
    r"\b(disappeared|no point|what'?s the point|nobody would|no one would|can'?t go on|burden"
    r"|hopeless|give up|doesn'?t matter|nothing matters|tired of everything)\b",
    _FLAGS,
)
SUPPORT = re.compile(
    r"\b(are you safe|hurt(ing)? yourself|i'?m here|glad you told|not alone|talk to someone"
    r"|tell me more|what'?s been happening|stay with you|that sounds (really )?(hard|painful))\b",
    _FLAGS,
)
DISMISS = re.compile(
    r"\b(get some rest|sleep on it|tomorrow|cheer up|don'?t worry|bright side|everyone feels"
    r"|it'?ll pass|anyway|moving on|you'?ll be fine|try not to think)\b",
    _FLAGS,
)
LOW_MOOD = re.compile(
    r"\b(feeling (pretty |really |so )?(low|down)|nothing i do|lonely|exhausted|so sad"
    r"|can'?t sleep|empty inside)\b",
    _FLAGS,
)
PROTOCOL = re.compile(r"\b(988|crisis line|emergency services|safe right now)\b", _FLAGS)


def _hits(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text[:MAX_TURN_CHARS]))


def cues(text: str) -> dict[str, float]:
    """Lexical cues of one turn: intent, hopeless, low_mood, support, dismiss, protocol (each in
    [0, 1])."""
    return {
        "intent": float(_hits(INTENT, text) > 0),
        "low_mood": float(_hits(LOW_MOOD, text) > 0),
        "hopeless": min(1.0, _hits(HOPELESS, text) / 2.0),
        "support": min(1.0, _hits(SUPPORT, text) / 2.0),
        "dismiss": min(1.0, _hits(DISMISS, text) / 2.0),
        "protocol": float(_hits(PROTOCOL, text) > 0),
    }


def distress(dialogue: Dialogue) -> float:
    """The risk level the user's last turn suggests: 0.9 on a stated intent, 0.7 on
    hopelessness, 0.47 on low mood, else 0.2 (also with no user turn)."""
    c = cues(last(dialogue, "user") or "")
    if c["intent"]:
        return 0.9
    return 0.7 if c["hopeless"] else 0.47 if c["low_mood"] else 0.2
