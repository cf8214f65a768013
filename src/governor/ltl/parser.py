"""Reading formulas: infix text (:func:`parse`) and the Safety Chip's prefix text (:func:`parse_prefix`).

Infix grammar, loosest first (``->``, ``<->`` and the binary temporal operators associate to the
right; ``&`` and ``|`` chains become one n-ary node)::

    iff     := implies ('<->' iff)?                      also '<=>'
    implies := or ('->' implies)?                        also '=>'
    or      := and ('|' and)*                            also '||', 'or'
    and     := binary ('&' binary)*                      also '&&', 'and'
    binary  := unary (('U' | 'W' | 'R' | 'M' | 'S' | 'B') binary)?
    unary   := ('!' | 'X' | 'WX' | 'F' | 'G' | 'Y' | 'Z' | 'O' | 'H') unary | primary
               also '~' and 'not' for '!', 'N' for 'WX', '[]' for 'G', '<>' for 'F'
    primary := 'true' | 'false' | 'end' | atom | '(' iff ')'
    atom    := name ('(' arg (',' arg)* ')')?            e.g. kitchen, is_in(apple, fridge)

Prefix (Polish) notation, one operator or atom per token: ``! X F G WX N Y Z O H`` take one
operand; ``& | i e U W R M S B`` take two (``i`` implies, ``e`` iff). Example:
``G i kitchen F living_room`` is ``G(kitchen -> F living_room)``.

Both readers use explicit stacks, not recursion, and are linear in the text; tokens and errors come
from :mod:`governor.ltl.reader` (a SpecError with the column and a window of the text with a caret
under the offending spot). Formulas deeper than :data:`~governor.ltl.syntax.MAX_DEPTH` are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.reader import Reader, Token

"""The longest formula text read; longer text is refused before it is tokenised."""
"""Characters of the text shown on each side of an error's column."""

_UNARY: dict[str, type[s.Unary]] = {
    "!": op.Not, "~": op.Not, "not": op.Not, "X": op.Next, "WX": op.WeakNext, "N": op.WeakNext,
    "F": op.Eventually, "<>": op.Eventually, "G": op.Always, "[]": op.Always, "Y": op.Yesterday,
    "Z": op.WeakYesterday, "O": op.Once, "H": op.Historically,
}  # fmt: skip
_TEMPORAL: dict[str, type[s.Binary]] = {
    "U": op.Until, "W": op.WeakUntil, "R": op.Release, "M": op.StrongRelease, "S": op.Since,
    "B": op.WeakSince,
}  # fmt: skip
_CONSTANTS: dict[str, s.Formula] = {"true": s.TRUE, "false": s.FALSE, "end": s.END}
_PREFIX_BINARY: dict[str, Callable[[s.Formula, s.Formula], s.Formula]] = {
    "&": lambda a, b: op.And((a, b)), "|": lambda a, b: op.Or((a, b)), "i": op.Implies,
    "->": op.Implies, "e": op.Iff, "<->": op.Iff, **_TEMPORAL, "V": op.Release,
}  # fmt: skip


def parse(text: str) -> s.Formula:
    """The formula written in infix ``text``, e.g. ``G(agent_at(kitchen) -> F is_open(fridge))``.

    Operator precedence parsing with explicit stacks: no recursion, linear in the text.
    """
    r = Reader(text)
    operands: list[s.Formula] = []
    pending: list[_Pending] = []
    want_operand = True
    while True:
        head = r.peek()
        if want_operand:
            if head in _UNARY or head == "(":
                pending.append(_Pending(r.take(), _UNARY_LEVEL if head != "(" else 0))
            elif head in _CONSTANTS:
                r.take()
                operands.append(_CONSTANTS[head])
                want_operand = False
            elif head is not None and r.word() and head not in s.KEYWORDS:
                operands.append(r.atom())
                want_operand = False
            else:
                r.fail("an operand (an atom, true, false, a unary operator or '(')")
            continue
        level = _TEMPORAL_LEVEL if head in _TEMPORAL and r.word() else _LEVELS.get(head or "", 0)
        if not level:
            if head == ")" and any(p.level == 0 for p in pending):
                _reduce(r, operands, pending, 0)
                pending.pop()
                r.take()
                continue
            if any(p.level == 0 for p in pending):
                r.fail("')'")
            if head is not None:
                r.fail("an operator or the end of the text")
            _reduce(r, operands, pending, 0)
            return operands[0]
        tok = r.take()
        _reduce(r, operands, pending, level)
        top = pending[-1] if pending else None
        if level in _NARY and top is not None and top.level == level:
            top.count += 1
        else:
            pending.append(_Pending(tok, level))
        want_operand = True


@dataclass
class _Pending:
    """An operator (or an open parenthesis, level 0) waiting for its operands."""

    tok: Token
    level: int
    count: int = 1  # binary operators seen in an n-ary chain


_IFF, _IMPLIES, _OR, _AND, _TEMPORAL_LEVEL, _UNARY_LEVEL = 1, 2, 3, 4, 5, 6
_LEVELS = {
    "<->": _IFF, "<=>": _IFF, "->": _IMPLIES, "=>": _IMPLIES,
    "|": _OR, "||": _OR, "or": _OR, "&": _AND, "&&": _AND, "and": _AND,
}  # fmt: skip
_NARY: dict[int, type[s.NAry]] = {_OR: op.Or, _AND: op.And}


def _reduce(r: Reader, operands: list[s.Formula], pending: list[_Pending], level: int) -> None:
    """Build the pending operators that bind tighter than ``level`` (all, down to an open
    parenthesis, for level 0); right-associative operators of the same level wait."""
    while pending and pending[-1].level and pending[-1].level > level:
        p = pending.pop()
        tok = p.tok
        if p.level == _UNARY_LEVEL:
            arg = operands.pop()
            operands.append(r.guard(tok, _UNARY[tok.text], arg))
            continue
        n = p.count + 1 if p.level in _NARY else 2
        args = operands[-n:]
        del operands[-n:]
        if p.level in _NARY:
            cls = _NARY[p.level]
            operands.append(r.guard(tok, cls, tuple(args)))
        else:
            build = {_IFF: op.Iff, _IMPLIES: op.Implies}.get(p.level) or _TEMPORAL[tok.text]
            operands.append(r.guard(tok, build, args[0], args[1]))


def parse_prefix(text: str) -> s.Formula:
    """The formula written in prefix ``text``, e.g. ``G i bathroom G ! bedroom``.

    Read with an explicit stack of operators waiting for operands: no recursion, linear.
    """
    r = Reader(text)
    waiting: list[tuple[Token, int, list[s.Formula]]] = []  # operator, arity, operands so far
    while True:
        head = r.peek()
        if head is None:
            r.fail("an operator or an atom")
        if head == "(":
            waiting.append((r.take(), 1, []))
            continue
        if head in _PREFIX_BINARY or head in _UNARY:
            waiting.append((r.take(), 2 if head in _PREFIX_BINARY else 1, []))
            continue
        if head in _CONSTANTS:
            r.take()
            value = _CONSTANTS[head]
        elif r.word() and head not in s.KEYWORDS:
            value = r.atom()
        else:
            r.fail("a prefix operator (! X WX F G Y Z O H & | i e U W R M S B) or an atom")
        while waiting:
            tok, arity, args = waiting[-1]
            args.append(value)
            if len(args) < arity:
                break
            waiting.pop()
            if tok.text == "(":
                r.expect(")")
            else:
                value = r.guard(tok, _prefix_node, tok.text, args)
        else:
            r.end()
            return value


def _prefix_node(symbol: str, args: list[s.Formula]) -> s.Formula:
    if symbol in _PREFIX_BINARY:
        return _PREFIX_BINARY[symbol](args[0], args[1])
    return _UNARY[symbol](args[0])


_PREFIX_SYMBOL = {op.Implies: "i", op.Iff: "e"}


def to_prefix(f: s.Formula) -> str:
    """``f`` in prefix notation; n-ary ``&`` and ``|`` nest to the right: ``& a & b c``."""
    if isinstance(f, s.NAry):
        head, *rest = f.args
        tail = rest[0] if len(rest) == 1 else type(f)(tuple(rest))
        return f"{f.SYMBOL} {to_prefix(head)} {to_prefix(tail)}"
    if isinstance(f, s.Binary):
        symbol = _PREFIX_SYMBOL.get(type(f), f.SYMBOL)
        return f"{symbol} {to_prefix(f.left)} {to_prefix(f.right)}"
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
