"""What the phrasing tests of the English-to-LTL rounds assert: a sentence reads as its pattern
family's formula over a test domain (exactly equivalent, as the benchmark checks), or it fails
with a reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governor.ltl.domain import Domain
from governor.ltl.english.domain_file import user_domain
from governor.ltl.english.translate import translate_offline
from governor.papers.ltl_translate import equivalent, intended


class Phrasings:
    """A test domain of places (one at a time) and propositions, and the two assertions."""

    def __init__(self, places: Sequence[str], props: Sequence[str]) -> None:
        self.places, self.props = list(places), list(props)
        self.domain: Domain = user_domain("test", self.props, self.places)

    def record(self, family: str, args: list[str], n: int | None) -> dict[str, Any]:
        """A benchmark record of ``family`` over ``args`` in this domain."""
        return {"family": family, "args": args, "n": n, "places": self.places, "props": self.props}

    def reads_as(self, sentence: str, family: str, args: list[str], n: int | None) -> None:
        """``sentence`` translates to ``family`` over ``args`` (and ``n``), exactly."""
        t = translate_offline(sentence, self.domain)
        assert t.formula is not None, t.error
        rec = self.record(family, args, n)
        assert equivalent(intended(rec), t.formula, rec), f"{t.formula} is not {intended(rec)}"

    def fails(self, sentence: str) -> None:
        """``sentence`` is not translated, and the failure says why."""
        t = translate_offline(sentence, self.domain)
        assert t.formula is None and t.error, t.formula
