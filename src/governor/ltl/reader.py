"""Reading formula text: one linear pass into tokens, and a cursor over them.

Text longer than :data:`MAX_CHARS` is refused before it is read. Errors are
:class:`~governor.errors.SpecError` with the column and a window of the text (at most
:data:`WINDOW` characters each side) with a caret under the offending spot, so a huge input is
never echoed whole. Imports the formula tree only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from governor.errors import SpecError
from governor.ltl import syntax as s

_SPACE = re.compile(r"\s*")


_TOKEN = re.compile(r"(<->|<=>|->|=>|&&|\|\||\[\]|<>|[!~&|(),])|([A-Za-z0-9_]+)|(\S)")


MAX_CHARS = 100_000


WINDOW = 60


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offset in the source
    word: bool  # a name or argument, not a symbol


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, in one left-to-right pass (linear in its length)."""
    out: list[Token] = []
    pos, end = 0, len(text)
    while True:
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= end:
            return out
        m = _TOKEN.match(text, pos)
        assert m is not None  # (\S) matches any character that is not a space
        if m.group(3) is not None:
            fail_at(
                text,
                m.start(3),
                f"expected an operator, a name or a parenthesis, found {m.group(3)!r}",
            )
        symbol = m.group(1) is not None
        out.append(Token(m.group(1) if symbol else m.group(2), pos, not symbol))
        pos = m.end()


def fail_at(text: str, offset: int, message: str) -> NoReturn:
    """A SpecError at ``offset``: the text (a window of it when long) with a caret below."""
    start = max(offset - WINDOW, 0)
    stop = min(offset + WINDOW, len(text))
    head = "..." if start else ""
    line = head + text[start:stop].replace("\n", " ").replace("\t", " ")
    line += "..." if stop < len(text) else ""
    caret = " " * (len(head) + offset - start)
    raise SpecError(f"{message} at column {offset + 1}\n  {line}\n  {caret}^")


class Reader:
    """A cursor over the tokens of one text."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise SpecError(f"formula text: expected a str, found {type(text).__name__}")
        if len(text) > MAX_CHARS:
            found = f"{len(text):,} characters"
            raise SpecError(
                f"formula text: expected at most {MAX_CHARS:,} characters, found {found}"
            )
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i].text if self.i < len(self.toks) else None

    def word(self) -> bool:
        """Whether the token at the cursor is a name (not a symbol)."""
        return self.i < len(self.toks) and self.toks[self.i].word

    def take(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, expected: str) -> NoReturn:
        if self.i < len(self.toks):
            tok = self.toks[self.i]
            fail_at(self.text, tok.start, f"expected {expected}, found {tok.text!r}")
        fail_at(self.text, len(self.text), f"expected {expected}, found the end of the text")

    def expect(self, text: str) -> None:
        if self.peek() != text:
            self.fail(repr(text))
        self.i += 1

    def atom(self) -> s.Formula:
        """An atom at the cursor (the name already checked to be a word)."""
        tok = self.take()
        if not s.NAME.fullmatch(tok.text):
            self.i -= 1
            self.fail("an atom name (a letter or _ first)")
        args: list[str] = []
        if self.peek() == "(":
            self.i += 1
            while True:
                if self.i >= len(self.toks) or not self.toks[self.i].word:
                    self.fail("an argument (letters, digits or _)")
                args.append(self.take().text)
                if self.peek() != ",":
                    break
                self.i += 1
            self.expect(")")
        return self.guard(tok, s.Atom, tok.text, tuple(args))

    def guard(self, tok: Token, build: Callable[..., s.Formula], *args: Any) -> s.Formula:
        """``build(*args)``; a SpecError from the node's constructor points at ``tok``."""
        try:
            return build(*args)
        except SpecError as exc:
            fail_at(self.text, tok.start, str(exc))

    def end(self) -> None:
        if self.i < len(self.toks):
            self.fail("an operator or the end of the text")
