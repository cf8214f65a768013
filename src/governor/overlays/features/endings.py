"""How a reply ends: the ``stray_tail`` feature's reading of a broken end.

A reply's end is broken (:func:`stray_tail_of` is 1) when:

- after its last full sentence comes an unpunctuated fragment of at most :data:`TAIL_WORDS`
  words with a lower-case word that is not common in the conversation's language (Zipf
  frequency under :data:`RARE`: "... a good time. audiencia", a base model's drift into
  another language; a word in capitals, "INTERVALS", is read the same way) or a capitalised
  one the language does not know (under :data:`UNKNOWN`: "... Lambert. Kemudian");
- or that fragment is one common word, in any case, that is not a reaction: "... listening to
  them. matters", "... Johnson. SUBSCRIBE", "... the numbers. Performs", a base model's next
  sentence begun and dropped. A reaction is what the tagger reads, the word put in lower case,
  as an interjection or an adjective (:data:`REACTIONS`: "lol", "haha", "wow", "funny",
  "insane"); a capitalised word rarer than :data:`NAME`, or one after an initial or a title, is
  read as a name ("... The Sixth Sense. Shyamalan", "... as Dr. Ross");
- or a word is glued to its last sentence's end ("... their policy?perluan", "... at
  all.compared", "... the story?Alright.": a base model's next token with no space);
- or its tail after the last sentence begins with the whole tail (two words or more) of an
  earlier reply of its own ("I'm fine. Tickets model", then "They won it. Tickets model anaknya": a
  tic; :func:`recurring_tail`, which no person's turn in the corpora does);
- or it ends in a run of three or more marks that opens a bracket it does not close or holds a
  mark of code ("... in the world!(".",", "... In the movie.="))"): code or markup, which
  people's emoticons (":(") and punctuation ("...", "?!") are not;
- or the reply, of :data:`CUT_WORDS` words or more, stops mid-sentence: on an article, a
  conjunction or a possessive with no punctuation after it (:data:`CUT_OFF`: "... I think
  that's the"), or on a contracted verb, punctuated or not ("... the only place where it's.");
  a shorter reply that trails off ("But", "what's") is a spoken turn cut by the other speaker.

Laughter ("lol", "hahah", "lolol", "xd") is never a stray tail, glued or not. People end with
"lol", "haha", "nice chat" (common reactions), with names, or with a closing sentence
(punctuated): all the rules together flag 0.07% of the 92,300 human turns of the four corpora
(a transcript's "... and", "... But", a chat's "... ttyl", "... Jordan").

Imports the text resources only (the tagger and word frequencies).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from governor.overlays.features.text import memo, tags, word_tuple, zipf

TAIL_WORDS = 2  # the most words of a trailing fragment
RARE = 4.0  # a lower-case word rarer than this Zipf frequency in the language
UNKNOWN = 2.0  # a capitalised word rarer than this (not a name the language knows)
NAME = 3.5  # a capitalised one-word tail rarer than this is read as a name
REACTIONS = frozenset({"UH", "JJ"})  # tags of a one-word tail people write ("lol")
CUT_OFF = frozenset({"the", "a", "an", "and", "but", "or", "my", "your", "their", "our"})
CUT_WORDS = 4  # a reply shorter than this that trails off is an interjection ("But", "Or")

_GLUED_TAIL = re.compile(  # "policy?perluan", "story?Alright."; not "example.com", "...wow!"
    r"(?<=\w)(?:[!?]+|\.(?!(?:com|org|net|edu|gov|io|ai|co|uk|de|fr|info)[.!?…]*\s*$))"
    r"[^\W\d_][\w'-]+[.!?…]*\s*$"
)
_SENTENCE_END = r"[.!?…]+[\"'”’)\]]*"  # a sentence's closing marks, quotes after them: '"hi."'
_TAIL = re.compile(_SENTENCE_END + r"\s+([^.!?…\n]{1,80})$")  # '... Story." süreç'
_WHOLE = re.compile(_SENTENCE_END + r"(?=\s|$)")  # where a whole sentence ends
_CONTRACTED_END = re.compile(  # "... the only place where it's." (no sentence ends on "it's")
    r"\b(?:(?:it|that|he|she|there|what|who|where|here|how|this)['’]s|\w+['’](?:re|m|ve|ll|d))"
    r"[.!?…]*$",
    re.IGNORECASE,
)
_MARKS_END = re.compile(r"[^\w\s]{3,}$")  # the marks after the last word
_CODE_MARKS = frozenset("=<>{}[]\\|`^~")  # marks of code or markup, not of people's punctuation
_TITLE = re.compile(
    r"\b(?:[A-Z]|Dr|Mr|Mrs|Ms|Mt|St|Jr|Sr|Prof|vs)\.\s*$"
)  # "Dr. Ross", "Joan B. Lee"
_LAUGH = re.compile(r"(?:lo)+l|(?:lmf?ao|rofl)|a?(?:h[aeio])+h?a*|x+d+", re.IGNORECASE)  # "hahah"


@memo()
def stray_tail_of(text: str, lang: str = "en") -> float:
    """1.0 when the end of ``text`` is broken (see the module doc), else 0.0."""
    end = text[-200:].rstrip()
    glued = _GLUED_TAIL.search(end)
    if (glued and not _LAUGH.fullmatch(glued.group().lstrip(".!?…").strip())) or _cut_off(end):
        return 1.0
    if _opens_code(end):
        return 1.0
    found = _TAIL.search(end)
    if found is None:
        return 0.0
    tail = word_tuple(found.group(1))
    if not 0 < len(tail) <= TAIL_WORDS:
        return 0.0
    rare = [
        w
        for w in tail
        if w.isalpha()
        and not _LAUGH.fullmatch(w)
        and zipf(w, lang) < (UNKNOWN if w.istitle() else RARE)
    ]
    if rare:
        return 1.0
    (word,) = tail if len(tail) == 1 else ("",)
    if word.istitle() and (zipf(word, lang) < NAME or _TITLE.search(end[: found.start(1)])):
        return 0.0  # a name ("... Shyamalan", "Dr. Ross")
    return 1.0 if word and _dropped_sentence(end, found.start(1)) else 0.0


def whole_sentences(text: str) -> str:
    """``text`` up to the end of its last whole sentence ('' when no sentence ends in it)."""
    end = 0
    for found in _WHOLE.finditer(text):
        end = found.end()
    return text[:end]


@memo()
def tail_words(text: str) -> tuple[str, ...]:
    """The words, in lower case, of the unpunctuated fragment after ``text``'s last sentence."""
    found = _TAIL.search(text[-200:].rstrip())
    return tuple(w.lower() for w in word_tuple(found.group(1))) if found else ()


def recurring_tail(text: str, earlier: Sequence[str]) -> float:
    """1.0 when ``text``'s tail begins with the whole tail (two words or more) of an ``earlier``
    reply."""
    mine = tail_words(text)
    if len(mine) < 2:
        return 0.0
    for e in earlier:
        theirs = tail_words(e)
        if len(theirs) >= 2 and mine[: len(theirs)] == theirs:
            return 1.0
    return 0.0


def _opens_code(end: str) -> bool:
    """Whether ``end`` closes on marks that open a bracket they do not close or that hold a mark
    of code (``=``, ``<``, ``{``, ...)."""
    marks = _MARKS_END.search(end)
    if marks is None:
        return False
    run = marks.group()
    unclosed = any(run.count(o) > run.count(c) for o, c in ("()", "[]", "{}"))
    return unclosed or any(ch in _CODE_MARKS for ch in run)


def _cut_off(end: str) -> bool:
    """Whether ``end`` stops, unpunctuated, on a word no sentence ends on, or on a contracted
    verb whatever follows it ("where it's.")."""
    said = end.split()
    if len(said) < CUT_WORDS:
        return False
    return (said[-1].isalpha() and said[-1].lower() in CUT_OFF) or bool(_CONTRACTED_END.search(end))


def _dropped_sentence(end: str, start: int) -> bool:
    """Whether the one-word tail of ``end`` (from ``start``) is not a reaction: the tagger reads
    it, in lower case, as neither an interjection nor an adjective."""
    word = end[start:].strip()
    if not word.isalpha() or _LAUGH.fullmatch(word):
        return False
    tagged = tags(end[:start] + word.lower())
    return bool(tagged) and tagged[-1][1] not in REACTIONS
