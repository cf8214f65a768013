"""The vocabulary of event grounding: word stems and a small lexicon of event verb families.

A proposition's name says an event or a state in a few words (``low_battery``,
``order_received``, ``timer_done``); a sentence says it in others ("the battery runs low", "an
order comes in", "the timer goes off"). :func:`stem` reduces inflections to one stem (``runs``,
``running``, ``ran`` -> ``run``; ``stored``, ``stores`` -> ``stor``), and :data:`FAMILIES`
groups the stems and particle phrases that say the same event: a word of a proposition's name
is said by any phrase of its family (``received`` by "come in"; ``done`` by "go off"); a phrase
of the opposite family says it negated (``open`` by "closed", ``on`` by "silent").

World-free: plain data and one function.
"""

from __future__ import annotations

from collections.abc import Sequence

IRREGULAR = {
    "ran": "run", "fell": "fall", "fallen": "fall", "came": "come", "went": "go", "gone": "go",
    "goes": "go", "sent": "send", "got": "get", "gotten": "get", "shown": "show", "rang": "ring",
    "rung": "ring", "saw": "see", "seen": "see",
    "taken": "take", "took": "take", "given": "give", "gave": "give", "made": "make",
    "left": "leave", "broke": "break", "broken": "break", "wore": "wear", "worn": "wear",
    "shut": "shut", "set": "set", "reset": "reset", "put": "put", "held": "hold",
    "began": "begin", "begun": "begin", "stood": "stand", "heard": "hear", "found": "find",
    "okay": "ok", "paid": "pay", "said": "say", "laid": "lay", "onto": "on", "into": "in",
}  # fmt: skip
"""Irregular inflections -> their stem."""
_KEEP_DOUBLE = frozenset("aeiouls")


def stem(word: str) -> str:
    """One stem for a word's inflections: ``runs``/``running``/``ran`` -> ``run``,
    ``arrives``/``arrived``/``arrive`` -> ``arriv``, ``passes``/``pass`` -> ``pass``."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    w = word
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith(("ss", "eed")):
            w = w[: -len(suffix)]
            if suffix in ("ed", "es") and w.endswith("i"):
                w = w[:-1] + "y"  # emptied, empties -> empty
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in _KEEP_DOUBLE:
        w = w[:-1]  # running -> runn -> run, shipped -> ship
    return w


def _phrases(text: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(stem(w) for w in p.split()) for p in text.split("|"))


_FAMILIES_TEXT = {
    "arrive": "arrive|come|show up|turn up|get here|get there|appear|pull in|reach",
    "return": "return|come back|be back|get back|go back",
    "receive": "receive|come in|arrive|get in|reach|in|place|submit",
    "done": "done|finish|end|go off|ring|expire|complete|be over|be up",
    "ok": "ok|succeed|pass|work|success|good|fine|valid",
    "fail": "fail|failure|error|fault",
    "on": "on|run|active|activate|wear|sound|switch on|turn on|power on|start|engage|come on|play"
    "|flash|blink|light up|kick in|cut in",
    "off": "off|silent|stop|inactive|quiet|switch off|turn off|power off|disengage|release",
    "up": "up|raise|lift|hoist|raised",
    "down": "down|lower|drop",
    "added": "add|go in|put in|load|insert",
    "stop": "stop|halt|come to a stop|come to a halt|come to a full stop|come to a standstill",
    "normal": "normal|back to normal|ok",
    "moving": "move|moving|in motion|under way|underway|travel",
    "open": "open|ajar",
    "closed": "close|shut",
    "sent": "send|go out|issue|dispatch",
    "clean": "clean|clean up|mop|mop up|wipe|wipe up",
    "full": "full|fill|fill up|overflow",
    "empty": "empty|empty out",
    "present": "present|here|there|show up|turn up|around|stand|wait",
    "absent": "absent|away|gone|missing|leave|left",
    "call": "call|ring|buzz|call for|shout|shout for|yell|yell for|radio|radio for|page|holler"
    "|cry|cry out|call out|ask for",
    "request": "request|ask for|call for|shout for|yell for|radio for",
    "show": "show|display|present|visible",
    "detected": "detect|spot|notice|sense|report|discover",
    "escaped": "escape|get out|run away|break out|slip out|break loose",
    "person": "person|someone|somebody|anyone|anybody|visitor|guest",
}
FAMILIES: dict[str, frozenset[tuple[str, ...]]] = {
    k: _phrases(v) for k, v in _FAMILIES_TEXT.items()
}
"""Event verb families: phrases (as stems) that say the same event."""
OPPOSITE = {"on": "off", "off": "on", "open": "closed", "closed": "open", "ok": "fail",
            "fail": "ok", "present": "absent", "absent": "present", "up": "down",
            "down": "up"}  # fmt: skip
"""Families that say each other's event negated."""
_MEMBERS: dict[tuple[str, ...], set[str]] = {}
for _name, _family in FAMILIES.items():
    for _p in _family:
        _MEMBERS.setdefault(_p, set()).add(_name)


NOUN_FAMILIES = frozenset({"request"})
"""Families whose word is a noun as well ("a request is made"): it keeps a name's word a noun."""


def families_of(word: str) -> frozenset[str]:
    """The families a name's word belongs to (by its stem)."""
    return frozenset(_MEMBERS.get((stem(word),), set()))


SOUNDERS = frozenset({"alarm", "siren", "bell", "buzzer", "horn", "alert", "timer", "beeper"})
"""Devices that "go off" by sounding: "the alarm goes off" says ``alarm_on`` (of a light or a
motor, "goes off" says it is off)."""
_GO_OFF = frozenset({("go", "off"), ("set", "off")})


def sayings(
    word: str, sounder: bool = False
) -> tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    """``(same, opposite)``: the stem phrases that say a name's word, and those that say it
    negated. ``same`` always holds the word's own stem; "go off" says ``on`` of a ``sounder``."""
    fams = families_of(word)
    same: set[tuple[str, ...]] = {(stem(word),)} | (_GO_OFF if sounder and "on" in fams else set())
    opposite: set[tuple[str, ...]] = set()
    for f in fams:
        same |= FAMILIES[f]
        if f in OPPOSITE:
            opposite |= FAMILIES[OPPOSITE[f]]
    return frozenset(same), frozenset(opposite - same)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SKIP = _set(
    "the a an your my its their our is are was were be been being get gets getting got become"
    " becomes becoming has have had must should will would can may to always still also do does"
    " did stays stay remains remain keep keeps turns turn turned goes go went run runs ran"
    " running grows grow growing going need needs too very that which who ever falls fall fell"
    " fallen rises rise rose rising climbs climb climbed drops drop dropped reads read left kept"
    " start starts started starting begin begins began beginning drive drives drove driving pull"
    " pulls pulled pulling roll rolls rolled rolling"
)
"""Words allowed between the words of an event phrase (auxiliaries, becoming, a relative)."""
CARRIED = frozenset({"eventually", "immediately", "only"})
"""Adverbs inside an event phrase that are kept, after its placeholder ("it must eventually be
reset" -> ``P2 eventually``)."""
PREPOSITIONS = frozenset({"in", "at", "on", "near", "from", "of"})
"""Openers of a phrase that modifies the subject ("the patient in room 7 calls")."""
DETERMINERS = frozenset({"the", "a", "an", "your", "my", "its", "their", "our"})
"""Determiners of an event's subject (a quantifier, "each", "every", is a cue word)."""
QUANTIFIERS = frozenset({"any", "every", "each", "all"})
"""Quantifiers of a subject with a relative clause ("every order that is placed")."""
STOPS = _set(
    "if when whenever while until unless before after and or but then once , . as than within"
    " not never no"
)
"""Words an event phrase never runs across (cue words and clause boundaries)."""
PARTICLES = frozenset({"up", "out"})
AGENTS = frozenset({"robot", "agent", "rover", "drone"})
"""A name's first word that is the agent itself: an order to it, in the name's own words, leaves
it unsaid ("..., stop at the next step" says ``robot_stopped``)."""
ORDER_OPENERS = frozenset({",", ".", "to", "must", "should", "then", "and", "please"})
"""Words after which an order to the agent may open."""
_TIMES = frozenset({"within", "immediately", "right", "now", "promptly", "then", "and", "at once"})
_NEXT = frozenset({"next", "very", "following", "same", "once"})


def timed_after(rest: Sequence[str]) -> bool:
    """Whether an order to the agent ends here: nothing, a boundary or a time follows ("stop at
    the next step", "stop within 2 steps"), not a place ("stop by the yard")."""
    if not rest or rest[0] in (",", ".") or rest[0] in _TIMES:
        return True
    at = [w for w in rest[1:3] if w != "the"]
    return rest[0] == "at" and bool(at) and at[0] in _NEXT


DEVICES = frozenset(
    {"sensor", "detector", "monitor", "button", "switch", "light", "lamp", "alarm", "camera",
     "gauge", "meter", "indicator", "panel", "display", "sign", "controller", "remote", "key"}
)  # fmt: skip
"""Heads of a compound that name a device of their own: "the hatch sensor" is not the hatch."""
SHORTEST = 4
"""Fewest letters of a word said in part (see :func:`part_of`)."""
AGENT_NOUNS = ("or", "er", "ors", "ers")


def part_of(name_stem: str, said: str, noun: bool) -> bool:
    """Whether ``said`` (a stem) says a name's word ``name_stem`` in part: a noun shortened
    ("temp" for "temperature"), a compound said by its head ("doorbell" by "bell"), or an event
    said by its agent noun ("detected" by "detector")."""
    if len(name_stem) < SHORTEST or len(said) < SHORTEST or said == name_stem:
        return False
    if noun:
        return said.startswith(name_stem) or name_stem.endswith(said)
    return any(said == name_stem + s for s in AGENT_NOUNS)


"""A particle closing an event phrase ("gets cleaned up")."""
