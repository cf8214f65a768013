"""The English word lists of the offline grounder, and the normalisation of sentences."""

from __future__ import annotations

import re

CONTRACTIONS = {
    "don't": "do not", "doesn't": "does not", "didn't": "did not", "haven't": "have not",
    "hasn't": "has not", "hadn't": "had not", "can't": "cannot", "won't": "will not",
    "mustn't": "must not", "shouldn't": "should not", "isn't": "is not", "aren't": "are not",
    "wasn't": "was not", "you've": "you have", "you're": "you are", "it's": "it is",
}  # fmt: skip


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


DETERMINERS = _set("the a an your my that this its")
PRONOUNS = frozenset({"it", "them"})
MOTION = _set(
    "go goes going went gone enter enters entering entered visit visits visiting visited been be"
    " walk walks walking walked reach reaches reached reaching come comes coming came return"
    " returns returning returned head heads heading sit sits sitting sat lie lies lying"
)
PARTICLES = _set("to into in inside near past on onto by at back over toward towards")
PLACE_CUES = _set("before after avoid from near past than at in unlock unlocks")
PUT = _set("put puts putting place places placed placing store stores stored")
OPEN = _set("open opens opened opening")
CLOSE = _set("close closes closed closing shut shuts shutting")
GRAB = _set("grab grabs grabbed grabbing take takes took taking hold holds")
PICK = _set("pick picks picked picking")
SWITCH = _set("switch switches switched switching turn turns turned turning")
IN, ON = _set("in into int inside"), frozenset({"on", "onto"})
VERBS = MOTION | PUT | OPEN | CLOSE | GRAB | PICK | SWITCH
FUNCTION = _set(
    "later if before after until then and or but when once twice again more less at for in on to"
    " up it them you is are not never too ever also afterward afterwards first"
)


def words(sentence: str) -> list[str]:
    """Lower-case words, contractions expanded, punctuation dropped, ``can not`` -> ``cannot``."""
    out: list[str] = []
    for w in re.findall(r"[a-z0-9_']+", sentence.lower().replace("’", "'")):
        out.extend(CONTRACTIONS.get(w, w.replace("'", "")).split())
    text = " ".join(w for w in out if w)
    return re.sub(r"\bcan not\b", "cannot", text).split()
