"""The phrase tables of the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser`): each cue phrase and the
symbols it becomes (:data:`SYMBOLS`, longest :data:`LONGEST` words), the number words, and the
phrases of counts and step bounds (kept in :mod:`governor.ltl.english.phrases.counts`) and the fillers
(:mod:`governor.ltl.english.phrases.fillers`).

Imports the count, filler, frame, order, reference and time phrases only.
"""

from __future__ import annotations

from governor.ltl.english.phrases.anaphora import REFERENCES
from governor.ltl.english.phrases.counts import (
    AFTER_N,
    BEFORE_N,
    COUNT_AFTER,
    COUNT_BEFORE,
    STEPS,
    TIMES,
    WITHIN,
)
from governor.ltl.english.phrases.fillers import FILLERS
from governor.ltl.english.phrases.frames import FRAMES
from governor.ltl.english.phrases.orders import ORDERS
from governor.ltl.english.phrases.time_units import next_phrases, unit_variants

__all__ = [
    "AFTER_N",
    "BEFORE_N",
    "CUE_WORDS",
    "LONGEST",
    "NUMBERS",
    "STEPS",
    "SYMBOLS",
    "TIMES",
    "WITHIN",
]

NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "single": 1, "twice": 2, "thrice": 3,
}  # fmt: skip
_CUES = {
    "NOT": "not|never|cannot|no|anywhere except|anywhere but|everywhere except|everywhere but|somewhere other than|anywhere other than"
    "|any place except|any room except|avoid|avoiding|avoided|keep off|keep off of|stay off|stay off of"
    "|stay away from|keep away from|keep out of|stay out|keep well clear of|stay well clear of|steer well clear of|well clear of|well away from"
    " of|keep clear of|steer clear of|off limits|away from|forbidden|prohibited|banned|out of bounds|refrain"
    " from|hold off on|hold off|without|no longer|nobody|nowhere|under no circumstances|at no point|none|none of them|neither"
    "|keeps out of|keeps away from|keeps clear of|keeps off|stays out of|stays away from|stays off|stay clear of|stays clear of",
    "MUST": "must|have to|has to|need to|needs to|should|required to|make sure|ensure|be sure to"
    "|do not forget to|do not forget|never forget to|remember to|always remember to|got to|shall"
    "|will|is sure to|are sure to|is certain to|is bound to|is guaranteed to|is mandatory"
    "|are mandatory|is compulsory|is required|are required|is going to|are going to",
    "CAN": "can|may|are allowed to|is allowed|allowed to|permitted to|free to",
    "ALWAYS": "always|at all times|at any time|at any point|ever|all the time|throughout",
    "WHENEVER": "whenever|every time|each time|any time|anytime|every single time|each and every time|at every moment"
    " that|at every moment when|at every step where|at every step when|at every step in which|at"
    " any moment when|at any step where|at each step where|at each moment when|any step in which|any"
    " step where|every step in which|each step in which|in response to each|in response to every"
    "|in response to any",
    "IF": "if|when|in case|as soon as|the moment|upon|on reaching|on entering|on arriving at"
    "|the instant|the very moment|the very instant|the minute",
    "WHILE": "while|whilst|as long as|during",
    "IFF": "if and only if|iff|exactly when|precisely when|just when|when and only when|exactly"
    " at the steps when|exactly at the times when|exactly at the moments when|exactly at the"
    " moments|exactly at the steps|must match|must always match|matches|always matches"
    "|exactly while|precisely while|just while|is equivalent to|equivalent to|precisely at the times"
    "|exactly if|precisely if|exactly as long as|precisely as long as|for exactly as long as"
    "|precisely at the times when|exactly at the times|at exactly the times|at precisely the times",
    "AFTER": "after|having|following|since",
    "BEFORE": "before|prior to|ahead of|earlier than",
    "UNTIL": "until|till|unless|up until|up to the point when|until after|not until after",
    "THEN": "then|and then|after that|after which|afterwards|afterward|later|later on|next|"
    "subsequently|finally|lastly|at the end|thereafter|and finally|continue to|proceed to|move on to|go on to|going on to|carry on to|head on to|end at|finish at|end in|finish in"
    "|end up at|end up in|at last|in the end",
    "EVENTUALLY": "eventually|at some point|sooner or later|in the future|at some time|some time|"
    "sometime|at a later point|at some later point|some time later",
    "FOLLOWED": "followed by|be followed by|is followed by|followed",
    "PERMIT": "is up to you|are up to you|is your call|is your choice|is fine|are fine|is ok|is okay|are ok|are okay|is allowed|are allowed|is permitted|"
    "are permitted|does not matter|do not matter|do not care|no matter|is acceptable|is no problem"
    "|is not a problem|is alright|is all right|are no problem|are not a problem|no problem|are acceptable"
    "|does not break anything|do not break anything|does no harm|do no harm|is harmless|are harmless"
    "|is tolerated|are tolerated|need not|needs not|does not need to|do not need to|does not have to"
    "|do not have to|does not count against you|do not count against you|is not counted against you"
    "|are not counted against you",
    "REF": "go there|get there|be there|going there|getting there|go back there|going back there|been there|being there|done so|done that",
    "AHEAD": "skip ahead|jump ahead|skip|out of order|out of turn|ahead of its turn|before its turn"
    "|ahead of turn|early|too early|too soon|prematurely",
    "NEXT": "immediately|directly|at the very next time step|at the next time step|in the next time step|on the next time step|the next time step|at the very next moment|at the next moment|in the next moment|at step t 1|at time t 1|at t 1|at step n 1|in step t 1|right away|straight away|at once|instantly|without delay|promptly|at the"
    " next step|at the very next step|on the next step|in the next step|the next step|next step|"
    "the very next step|the step after|the following step|at the following step|one step later"
    "|one step from now|a step later",
    "NEXTAFTER": "right after|immediately after|directly after|just after|straight after|"
    "immediately following|right following",
    "ORDER": "in this order|in that order|in order|in the given order|in the order given|in the"
    " order listed|in the listed order|in sequence|one after"
    " the other|one after another|in that exact order|in this exact order|in the exact order|in exactly"
    " this order|in exactly that order|in the stated order|in the same order|sequentially|in the order"
    " shown|in the order stated|in the order named|in the order i listed|in the order i gave|with no skipping ahead|without skipping ahead|no skipping ahead|never skipping ahead|with no skipping|without skipping|no skipping"
    "|not the other way round|not the other way around|never the other way round|never the other"
    " way around",
    "ANYORDER": "do not care about the order|the order does not matter|order does not matter|any"
    " order is fine|in any order you like|in whatever order you like|the order is up to you|in any"
    " order|in whatever order|in no particular order|any order|either order|in any sequence|no particular"
    " order|in no specific order|no specific order|whichever first|whichever comes first|whichever order"
    "|regardless of order|in whichever order|the order is irrelevant|order is irrelevant|which one"
    " comes first is up to you|which comes first is up to you|which one you do first is up to you"
    "|which one first is up to you|the order is your choice|the order is your call|you choose the"
    " order|you pick the order|which one comes first is up to it|which comes first is up to it"
    "|not in any particular order|i do not mind which comes first|i do not mind which one comes"
    " first|i do not mind the order|i do not care which comes first",
    "ANY": "all of|each of|both|every one of|all|each|every|them",
    "REPEAT": "keep|keep on|patrol|patrolling|without end|without stopping|never stopping|never"
    " ending|back and forth between|to and fro between|never just once and done|not just once and done|time after time|non stop|nonstop|repeatedly|again and again|over and over|over and "
    "over again|forever|infinitely often|endlessly|continually|continuously|indefinitely|"
    "regularly|periodically|in a loop|on a loop|loop|cycle|cycle through|circulate|time and again"
    "|never stop|round and round|round after round|perpetually|time and time again|never giving up|never give up|without ever stopping|never ever stopping"
    "|with no end|without an end|unendingly|on repeat|endless|endlessly|unending|infinitely"
    " many times|an infinite number of times|infinitely many|loops|loops between|loop between"
    "|cycles through|cycles between|patrols|keeps",
    "STAY": "stay|remain|wait|waits|stays|remains|stay put|linger|hold position|keep waiting|hold at|hold still at"
    "|hold your position|keep your position|keep standing|stand|remain standing|stay standing"
    "|keep sitting|keep parked|stay parked|remain parked|hang around|hang out|sit tight|hover|hover"
    " over|hover above|hover at|idle at|stand by at|stand by in|sit with|sit beside|sit by|stay beside",
    "LEAVE": "leave|exit|depart|depart from|move out of|get out of|go out of|step out of|left|leaves"
    "|leaving|exits|exited|exiting|departed|move away from|walk away from|step away from"
    "|walk out of|come out of|walked out of|came out of",
    "AGAIN": "again|a second time|come back|go back|return|revisit|re enter|reenter|reentered"
    "|re entered|revisited|returned to|entered again|visited again|reentering|re entering|step back in|walk back in",
    "ONLY": "only|just|at no step except|at no time except|at no other step than|at no other"
    " time than|never except|at no step other than",
    "AND": "and|as well as|plus|along with|together with",
    "NOR": "nor|and nor|or nor",
    "OR": "or",
    "MEANS": "means|implies|requires|obliges you to|means that|forces you to",
    "PERF": "have|has|had|already",
    "TOGETHER": "go together|always go together|must go together|must always go together|coincide"
    "|must coincide|always coincide|must always coincide|both or neither|both or none|at exactly the"
    " same steps|at exactly the same times|at exactly the same moments|at the very same steps",
    "SAME": "right then|then and there|at that very moment|at that very step|at that instant|at the same"
    " moment|at the same instant|at that same instant|at that very time|at the same time|simultaneously|concurrently|at that same step|in the same step|at "
    "the same step|as well",
    "NOW": "now|at step t|at time t|in step t|at this one|at the current one|currently|right now|at that step|at the current step|in the current step|at this"
    " step|at that moment|that same moment",
    "FROMNOW": "ever again|anymore|any more|any longer|from then on|from that point on|from that"
    " moment on|from now on|for good|for the rest of the time|thereafter",
    "FIRST": "first|first of all|to begin|to begin with|to start|start at|start by|begin at|"
    "begin by|start in|start from|begin in|initially|start with|begin with",
    "OTHERWISE": "otherwise|anywhere else|everywhere else|elsewhere|when you are anywhere else|when you are elsewhere|whenever you are anywhere else|whenever it is not|when it is not|if it is not|while it is not|whenever it does not|when it does not|never otherwise|and never otherwise|not otherwise|and not otherwise|at all other times|at any other time|at other times"
    "|at no other time|and at no other time|at no other times|and at no other times|and not at other"
    " times|not at other times|at no other step|on no other step|in no other step|and at no other"
    " step|and on no other step|never at any other time|and never at any other time|never at other"
    " times|never at other steps|never at any other step|not at any other step|not at other steps"
    "|never on any other step|at no other point|at other steps|on other steps|at any other step",
    "STRICT": "exactly once each|only once each|once each|each only once|each exactly once|each"
    " once|without returning|never returning|no revisits|without going back|without revisiting"
    " any|not twice|strictly|never revisiting|without revisiting|not revisiting|never going back|"
    "without ever going back|no going back|no backtracking|without backtracking|with no"
    " backtracking|no doubling back|without doubling back|do not double back|never double back"
    "|no leaving and reentering|without leaving and reentering|no leaving and coming back",
}
SYMBOLS: dict[tuple[str, ...], tuple[str, ...]] = {}
for _sym, _text in _CUES.items():
    for _phrase in _text.split("|"):
        SYMBOLS[tuple(_phrase.split())] = (_sym,)
for _stop in (
    "never stop",
    "never stops",
    "never stopping",
    "does not stop",
    "never ceases",
    "do not ever stop",
    "never ever stop",
):
    SYMBOLS[tuple(_stop.split())] = ("REPEAT",)  # "it never stops coming back to them"
for _go in ("go", "going", "move", "moving", "travel", "shuttle", "run", "drive", "walk"):
    SYMBOLS[(_go, "back", "and", "forth", "between")] = ("REPEAT",)  # not "go back": a return
SYMBOLS[("do", "not", "stop")] = ("REPEAT",)
SYMBOLS[("do", "not", "forget")] = ("MUST",)
for _stay in ("stay there", "remain there", "wait there", "stay put there", "keep waiting there"):
    SYMBOLS[tuple(_stay.split())] = ("STAY", "REF")  # "be at A and stay there until b"
SYMBOLS[("not", "only")] = ()
for _verb in ("rules out", "rule out", "excludes", "precludes", "forbids", "prevents"):
    SYMBOLS[tuple(_verb.split())] = ("MEANS", "NOT")
for _each in ("each", "every", "any", ""):
    SYMBOLS[tuple(f"one step after {_each}".split())] = ("NEXT", "WHENEVER" if _each else "AFTER")
for _filler in FILLERS:
    SYMBOLS[tuple(_filler.split())] = ()
for _each in ("of every", "of each", "of any", "after every", "after each", "after any"):
    SYMBOLS[tuple(_each.split())] = ("WHENEVER",)
for _w in ("when", "if", "while"):  # "when, and only when,": commas around the second half
    for _key in (f"{_w} , and only {_w} ,", f"{_w} , and only {_w}", f"{_w} and only {_w} ,"):
        SYMBOLS[tuple(_key.split())] = ("IFF",)
_EXACTLY = ("exactly at", "precisely at", "just at", "at exactly", "at precisely", "during exactly",
            "exactly during", "precisely during")  # fmt: skip
for _adv in _EXACTLY:  # "exactly at those times when", "during exactly those steps in which"
    for _det in ("the", "those"):
        for _noun in ("times", "moments", "steps", "instants"):
            for _end in ("", " when", " that", " in which", " at which"):
                SYMBOLS[tuple(f"{_adv} {_det} {_noun}{_end}".split())] = ("IFF",)
for _stir in ("not move from", "not stir from", "not budge from", "never move from"):
    SYMBOLS[tuple(_stir.split())] = ("NOT", "LEAVE")  # "do not move from the mill until ..."
for _period in ("every other", "every second", "every third", "on odd", "on even"):
    SYMBOLS[tuple(_period.split())] = ("NUM",)  # a period: no pattern has one
for _n, _nth in enumerate(("third", "fourth", "fifth", "sixth", "seventh", "eighth"), 3):
    SYMBOLS[("a", _nth, "time")] = (f"GE_{_n}",)  # "never enter A a third time"
for _seq in ("in that sequence", "in this sequence", "in the same sequence", "in that exact sequence",
             "in this exact sequence"):  # fmt: skip
    SYMBOLS[tuple(_seq.split())] = ("ORDER", "LOOSE")  # the sequence said: a sequenced visit
for _strict in (
    "in strict order",
    "in strict sequence",
    "in a strict order",
    "in strict succession",
):
    SYMBOLS[tuple(_strict.split())] = ("STRICT", "ORDER")
for _moment in ("at every moment", "at each moment", "at any moment", "every moment", "at every step",
                "at each step", "at any step"):  # fmt: skip
    SYMBOLS[tuple(_moment.split())] = ("WHENEVER",)
    SYMBOLS[(*_moment.split(), ",")] = ("ALWAYS", "COMMA")  # "at every step, ...": always
    SYMBOLS[(*_moment.split(), ".")] = ("ALWAYS", "STOP")
    SYMBOLS[(*_moment.split(), "of")] = ("ALWAYS",)  # "at every moment of the voyage"
SYMBOLS[(",",)] = ("COMMA",)
SYMBOLS[(".",)] = ("STOP",)
SYMBOLS[("but",)] = ("BUT",)
SYMBOLS[(",", "so")] = ("COMMA", "SO")  # "..., so go to B": a consequence
SYMBOLS[("(",)] = SYMBOLS[(")",)] = ("PAREN",)  # an aside: read by the shape passes
for _be in ("be", "you are", "being", "the robot is", "the agent is"):  # where the agent is
    SYMBOLS[tuple(_be.split())] = ("BE",)
SYMBOLS[("again",)] = ("AGAIN",)
for _who in ("the robot", "the rover", "yourself", "the agent"):  # "keep the robot in A until b"
    SYMBOLS[("keep", *_who.split(), "in")] = ("STAY",)
SYMBOLS.update(FRAMES)
SYMBOLS.update(REFERENCES)
SYMBOLS.update(ORDERS)
SYMBOLS.update({k: v for k, v in next_phrases().items() if k not in SYMBOLS})
SYMBOLS.update(unit_variants(SYMBOLS))  # "at no other turn", "one move after each"
LONGEST = max(len(k) for k in SYMBOLS)

CUE_WORDS = (
    frozenset(
        w
        for table in (_CUES, COUNT_BEFORE, COUNT_AFTER)
        for v in table.values()
        for phrase in v.split("|")
        for w in phrase.split()
    )
    | frozenset(NUMBERS)
    | frozenset({"times", "once", "steps", "step", "same", "time"})
)
"""Every word of a cue phrase: a word that names no place."""
