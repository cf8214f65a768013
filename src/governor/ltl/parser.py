"""Reading formulas: infix text (:func:`parse`) and the Safety Chip's prefix text (:func:`parse_prefix`).

Infix grammar, loosest first (``->``, ``<->`` and the binary temporal operators associate to the
right; ``&`` and ``|`` chains become one n-ary node)::

    iff     := implies ('<->' iff)?                      also '<=>'
    implies := or ('->' implies)?                        also '=>'
    or      := and ('|' and)*                            also '||', 'or'
    and     := binary ('&' binary)*                      also '&&', 'and'
    binary  := unary (('U' | 'W' | 'R' | 'S' | 'B') binary)?
    unary   := ('!' | 'X' | 'WX' | 'F' | 'G' | 'Y' | 'Z' | 'O' | 'H') unary | primary
               also '~' and 'not' for '!', 'N' for 'WX', '[]' for 'G', '<>' for 'F'
    primary := 'true' | 'false' | 'end' | atom | '(' iff ')'
    atom    := name ('(' arg (',' arg)* ')')?            e.g. kitchen, is_in(apple, fridge)

Prefix (Polish) notation, one operator or atom per token: ``! X F G WX N Y Z O H`` take one
operand; ``& | i e U W R S B`` take two (``i`` implies, ``e`` iff). Example:
``G i kitchen F living_room`` is ``G(kitchen -> F living_room)``.

Errors are :class:`SpecError` with the column, the text and a caret under the offending spot.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s

_TOKEN = re.compile(r"\s*(?:(<->|<=>|->|=>|&&|\|\||\[\]|<>|[!~&|(),])|([A-Za-z0-9_]+)|(\S))")

_UNARY: dict[str, type[s.Unary]] = {
    "!": op.Not, "~": op.Not, "not": op.Not, "X": op.Next, "WX": op.WeakNext, "N": op.WeakNext,
    "F": op.Eventually, "<>": op.Eventually, "G": op.Always, "[]": op.Always, "Y": op.Yesterday,
    "Z": op.WeakYesterday, "O": op.Once, "H": op.Historically,
}  # fmt: skip
_TEMPORAL: dict[str, type[s.Binary]] = {
    "U": op.Until, "W": op.WeakUntil, "R": op.Release, "S": op.Since, "B": op.WeakSince,
}  # fmt: skip
_CONSTANTS: dict[str, s.Formula] = {"true": s.TRUE, "false": s.FALSE, "end": s.END}
_PREFIX_BINARY: dict[str, Callable[[s.Formula, s.Formula], s.Formula]] = {
    "&": lambda a, b: op.And((a, b)), "|": lambda a, b: op.Or((a, b)), "i": op.Implies,
    "->": op.Implies, "e": op.Iff, "<->": op.Iff, **_TEMPORAL, "V": op.Release,
}  # fmt: skip


@dataclass(frozen=True)
class _Token:
    text: str
    start: int  # offset in the source
    word: bool  # a name or argument, not a symbol


def _tokens(text: str) -> list[_Token]:
    out = []
    for m in _TOKEN.finditer(text):
        if m.group(3) is not None:
            _fail(
                text,
                m.start(3),
                f"expected an operator, a name or a parenthesis, found {m.group(3)!r}",
            )
        if m.group(1) is not None:
            out.append(_Token(m.group(1), m.start(1), False))
        elif m.group(2) is not None:
            out.append(_Token(m.group(2), m.start(2), True))
    return out


def _fail(text: str, offset: int, message: str) -> NoReturn:
    line = text.replace("\n", " ").replace("\t", " ")
    raise SpecError(f"{message} at column {offset + 1}\n  {line}\n  {' ' * offset}^")


class _Reader:
    """A cursor over the tokens of one text."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise SpecError(f"formula text: expected a str, found {type(text).__name__}")
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i].text if self.i < len(self.toks) else None

    def take(self) -> _Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, expected: str) -> NoReturn:
        if self.i < len(self.toks):
            tok = self.toks[self.i]
            _fail(self.text, tok.start, f"expected {expected}, found {tok.text!r}")
        _fail(self.text, len(self.text), f"expected {expected}, found the end of the text")

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
        return self.guard(tok, lambda: s.Atom(tok.text, tuple(args)))

    def guard(self, tok: _Token, build: Callable[[], s.Formula]) -> s.Formula:
        """Build a node; a SpecError from its constructor points at ``tok``."""
        try:
            return build()
        except SpecError as exc:
            _fail(self.text, tok.start, str(exc))

    def end(self) -> None:
        if self.i < len(self.toks):
            self.fail("an operator or the end of the text")


def parse(text: str) -> s.Formula:
    """The formula written in infix ``text``, e.g. ``G(agent_at(kitchen) -> F is_open(fridge))``."""
    r = _Reader(text)
    f = _iff(r)
    r.end()
    return f


def _iff(r: _Reader) -> s.Formula:
    left = _implies(r)
    if r.peek() in ("<->", "<=>"):
        r.take()
        return op.Iff(left, _iff(r))
    return left


def _implies(r: _Reader) -> s.Formula:
    left = _chain(r, op.Or, ("|", "||", "or"))
    if r.peek() in ("->", "=>"):
        r.take()
        return op.Implies(left, _implies(r))
    return left


def _chain(r: _Reader, cls: type[s.NAry], ops: tuple[str, ...]) -> s.Formula:
    below = _and if cls is op.Or else _binary
    items = [below(r)]
    while r.peek() in ops:
        r.take()
        items.append(below(r))
    return items[0] if len(items) == 1 else cls(tuple(items))


def _and(r: _Reader) -> s.Formula:
    return _chain(r, op.And, ("&", "&&", "and"))


def _binary(r: _Reader) -> s.Formula:
    left = _unary(r)
    op = r.peek()
    if op in _TEMPORAL and r.toks[r.i].word:
        tok = r.take()
        right = _binary(r)
        return r.guard(tok, lambda: _TEMPORAL[tok.text](left, right))
    return left


def _unary(r: _Reader) -> s.Formula:
    op = r.peek()
    if op in _UNARY:
        tok = r.take()
        arg = _unary(r)
        return r.guard(tok, lambda: _UNARY[tok.text](arg))
    if op == "(":
        r.take()
        inner = _iff(r)
        r.expect(")")
        return inner
    if op in _CONSTANTS:
        r.take()
        return _CONSTANTS[op]
    if op is not None and r.toks[r.i].word and op not in s.KEYWORDS:
        return r.atom()
    r.fail("an operand (an atom, true, false, a unary operator or '(')")


def parse_prefix(text: str) -> s.Formula:
    """The formula written in prefix ``text``, e.g. ``G i bathroom G ! bedroom``."""
    r = _Reader(text)
    f = _prefix(r)
    r.end()
    return f


def _prefix(r: _Reader) -> s.Formula:
    op = r.peek()
    if op is None:
        r.fail("an operator or an atom")
    if op == "(":
        r.take()
        inner = _prefix(r)
        r.expect(")")
        return inner
    if op in _PREFIX_BINARY:
        tok = r.take()
        left = _prefix(r)
        right = _prefix(r)
        return r.guard(tok, lambda: _PREFIX_BINARY[tok.text](left, right))
    if op in _UNARY:
        tok = r.take()
        arg = _prefix(r)
        return r.guard(tok, lambda: _UNARY[tok.text](arg))
    if op in _CONSTANTS:
        r.take()
        return _CONSTANTS[op]
    if r.toks[r.i].word and op not in s.KEYWORDS:
        return r.atom()
    r.fail("a prefix operator (! X WX F G Y Z O H & | i e U W R S B) or an atom")


_PREFIX_SYMBOL = {op.Implies: "i", op.Iff: "e"}


def to_prefix(f: s.Formula) -> str:
    """``f`` in prefix notation; n-ary ``&`` and ``|`` nest to the right: ``& a & b c``."""
    if isinstance(f, s.NAry):
        head, *rest = f.args
        tail = rest[0] if len(rest) == 1 else type(f)(tuple(rest))
        return f"{f.SYMBOL} {to_prefix(head)} {to_prefix(tail)}"
    if isinstance(f, s.Binary):
        op = _PREFIX_SYMBOL.get(type(f), f.SYMBOL)
        return f"{op} {to_prefix(f.left)} {to_prefix(f.right)}"
    if isinstance(f, s.Unary):
        return f"{f.SYMBOL} {to_prefix(f.arg)}"
    return str(f)


def atom(text: str) -> s.Atom:
    """The atom written as ``text`` (``kitchen``, ``is_in(apple,fridge)``), in canonical form."""
    f = parse(text)
    if not isinstance(f, s.Atom):
        raise SpecError(f"expected an atom, found the formula {f}")
    return f


def canonical_label(text: str) -> str:
    """The canonical label of an atom written loosely: ``is_in(apple,fridge)`` ->
    ``is_in(apple, fridge)``."""
    return atom(text).label
