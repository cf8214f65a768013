"""The cue phrases of time frames and restatements (:mod:`governor.ltl.english.phrases.symbols` merges
them): a frame of the whole run ("all night long", "for as long as you are running", "during
the night"), a restatement of timing said already ("not at that moment and not later", "at the
next step, not later"), an unhurried aside ("no rush"), none of which constrains anything, and
phrases that say a time in other words: "then or at some point later" (``EVENTUALLY``), "from
that moment onwards" / "for the rest of the run" (``FROMNOW``), "any moment" (``WHENEVER``),
"whenever you like" / "whenever you get a chance" (an unhurried aside), "there's no point after which you can stop"
(``REPEAT``: never stop), "there is no situation
in which" (``NOT``); "while you're doing the rounds" / "while on your shift" frame the run.

Imports nothing of the project.
"""

from __future__ import annotations

__all__ = ["FRAMES"]

FRAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
_SPANS = ("night", "day", "afternoon", "morning", "evening", "shift", "week", "tour", "trip", "run",
          "mission", "round", "rounds", "patrol", "visit", "session", "game", "level", "watch",
          "service", "voyage", "flight", "show", "performance", "match", "season", "exercise",
          "operation", "job", "cruise", "drill", "event", "festival", "concert", "race",
          "inspection", "check", "outing", "survey", "sweep", "brew", "screening", "lesson",
          "class", "meeting", "rehearsal", "tasting", "delivery", "storm", "market", "fair",
          "lunch", "break", "clean", "harvest", "service window", "open day", "viewing")  # fmt: skip
_RUNNING = ("you are running", "you are operating", "you are active", "you work",
            "you are working", "you are on duty", "the robot is running", "the robot runs",
            "you are switched on", "you are powered on")  # fmt: skip
_ONWARDS = ("from that moment onwards", "from that moment onward", "from then onwards",
            "from then onward", "from that point onwards", "from that point onward",
            "from that moment forward", "from then forward", "from that time on",
            "from that time onwards", "from that step on", "from that step onwards",
            "from this moment on", "ever after", "forever after", "for ever after", "permanently",
            "from then on permanently", "for all time after that")  # fmt: skip
_QUIET = ("no rush", "no hurry", "there is no rush", "there is no hurry", "take your time",
          "and beyond", "all night long", "all day long", "not at that moment and not later",
          "not at that moment and not at any time after it", "not then and not later",
          "neither then nor later", "not at that moment and not at any later time",
          "not later", "and not later", "but not later", "right then or", "at once or",
          "immediately or", "then or", "straight away or", "without fail", "no matter what",
          "come what may")  # fmt: skip
_LEISURE = tuple(f"{w} {x}" for w in ("whenever", "when")
                 for x in ("you like", "you want", "you wish", "you please", "it suits you",
                           "suits you", "you get round to it", "you get around to it",
                           "you get a chance", "you get the chance", "you have a chance",
                           "you have the chance", "you get a moment", "you have a moment",
                           "you find the time", "you have time"))  # fmt: skip
_LATER = (
    "then or later", "then or at some point later", "then or at some later point",
    "right then or later", "now or later", "then or afterwards", "at that point or later",
    "then or at a later point", "then or some time later",
    *(f"then or {at} {some} later {unit}" for at in ("at", "on", "in")
      for some in ("some", "a", "any") for unit in ("step", "time", "moment", "turn", "tick")),
)  # fmt: skip

for _span in _SPANS:
    for _lead in ("during the", "during your", "during", "throughout the", "throughout your", "all",
                  "for the whole", "for the entire", "over the", "through the", "for your",
                  "during this", "throughout this", "for this whole", "over this"):  # fmt: skip
        FRAMES[(*_lead.split(), *_span.split())] = ()
    for _rest in ("for the rest of the", "for the rest of your", "for the remainder of the"):
        FRAMES[(*_rest.split(), *_span.split())] = ("FROMNOW",)
for _run in _RUNNING:
    for _lead in ("for as long as", "as long as", "while"):
        FRAMES[(*_lead.split(), *_run.split())] = ()
for _span in _SPANS:  # "for as long as the game runs", "no matter how long the shift lasts"
    for _lead in ("for as long as the", "as long as the", "no matter how long the",
                  "however long the", "for as long as your", "no matter how long your"):  # fmt: skip
        for _lasts in ("runs", "lasts", "goes on", "takes"):
            FRAMES[(*_lead.split(), _span, *_lasts.split())] = ()
for _phrase in _QUIET + _LEISURE:
    FRAMES[tuple(_phrase.split())] = ()
for _phrase in _ONWARDS:
    FRAMES[tuple(_phrase.split())] = ("FROMNOW",)
for _phrase in _LATER:
    FRAMES[tuple(_phrase.split())] = ("EVENTUALLY",)
for _never in ("never let it be", "do not let it be", "never make it", "do not make it"):
    for _last in ("your last visit", "the last visit", "your last", "the last time"):
        FRAMES[(*_never.split(), *_last.split())] = ("REPEAT",)  # "... never let it be your last"
for _not in ("do not", "never", "you must not", "you cannot"):  # "don't finish without A": A
    for _end in ("finish", "end", "stop", "complete", "wrap up", "leave", "go home", "return"):
        for _span in ("", "the round", "your round", "the tour", "your tour", "the shift",
                      "your shift", "the run", "your run", "the day", "the mission"):  # fmt: skip
            for _without in ("without", "without having", "without first", "without first having"):
                FRAMES[tuple(f"{_not} {_end} {_span} {_without}".split())] = ("MUST",)
for _moment in ("any moment", "each moment", "any instant", "every instant", "each instant"):
    FRAMES[tuple(_moment.split())] = ("WHENEVER",)
for _point in ("point", "time", "moment", "step"):  # "there's no point after which you can stop"
    for _which in ("after which", "afterwards", "at which", "when", "where"):
        for _may in ("you can", "you may", "it can", "it may", "the robot can", "the robot may"):
            _never = f"there is no {_point} {_which} {_may} stop"
            FRAMES[tuple(_never.split())] = ("REPEAT",)
for _may in ("you can", "you may", "it can", "it may", "you are allowed to", "it is allowed to"):
    FRAMES[tuple(f"at no point {_may} stop".split())] = ("REPEAT",)  # "never stop"
    FRAMES[tuple(f"{_may} never stop".split())] = ("REPEAT",)
for _case in ("situation", "case", "circumstance", "time", "moment", "point"):  # "there is no
    for _which in ("in which", "where", "when", "at which"):  # situation in which A may be entered"
        FRAMES[tuple(f"there is no {_case} {_which}".split())] = ("NOT",)
for _lead in ("while you are doing", "while you do", "while doing", "while you are on", "while on"):
    for _span in ("the rounds", "your rounds", "the round", "your round", "the tour", "your tour",
                  "the shift", "your shift", "duty", "patrol", "your patrol"):  # fmt: skip
        FRAMES[(*_lead.split(), *_span.split())] = ()  # "while you're doing the rounds, ..."
