"""Where a value came from: an index of the normalised values a session has seen, by source.

A tool call's argument is *from* a source when its normalised value appeared in that source's
messages before the call. Sources are tags: ``user`` (the user's messages), ``system`` (the
system prompt), ``tool`` (any tool's result), ``tool:NAME`` (the results of ``NAME``),
``tool:NAME.FIELD`` (the values of the field ``FIELD`` in the results of ``NAME``: the keys of
their JSON objects, else of their YAML mappings, each item of a list under the key included,
else their ``FIELD: value`` lines), ``group:NAME`` (the results of a
tool of a declared group), ``trusted`` (the user, the system
prompt and the results of trusted tools) and ``untrusted`` (the results of every other tool; a
result whose call cannot be named is untrusted).

Normalisation, the rule the policy check prints (:data:`MATCHING`): text is NFKC-folded,
case-folded, and reduced to its letters and digits (whitespace, punctuation and invisible
characters dropped), so ``Bob.Smith@Example.com``, ``bob smith example com`` and
``BOB-SMITH@EXAMPLE.COM`` are one value; a number (or numeric text) is a number, so ``100``,
``"100.00"`` and ``€100`` are one value. A source text contributes every run of 1 to
:data:`MAX_NGRAM` consecutive words (up to :data:`MAX_KEY_CHARS` normalised characters), each
line and the whole text (up to :data:`MAX_LINE_CHARS`), and every number in it: so an address or
an IBAN inside a longer text counts, spaced IBANs included. A list or object argument is from a
source when every value in it is. An empty value is from nowhere.

The index grows by what is new since the last commit only (:meth:`Seen.extended` reads the
messages after ``indexed``): a what-if check indexes the few new messages into a delta, a commit
keeps it. Its sets are kept as levels of geometrically growing size (a binary counter), so a
commit copies O(log n) keys per key on average and a lookup reads O(log n) sets, never the whole
session. Imports the guard's exchange and the error tree.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from governor.errors import ConfigError, GovernorError, expected
from governor.guard.exchange import Message

MAX_NGRAM = 6
"""The most consecutive words of a source text indexed as one value (a spaced IBAN is 6)."""
MAX_KEY_CHARS = 64
"""The most normalised characters of a run of words indexed as one value."""
MAX_LINE_CHARS = 256
"""The most normalised characters of a line (or a whole text) indexed as one value."""
MAX_SOURCE_CHARS = 65_536
"""The most characters of one message read into the index (the rest is not seen)."""
MAX_KEYS = 400_000
"""The most keys a session's index may hold; past it a check fails (closed)."""
SOURCES = ("user", "system", "tool", "trusted", "untrusted")
"""The source tags without a name; ``tool:NAME`` and ``group:NAME`` name one."""
NOWHERE = "nowhere"
"""The pseudo-source of a made-up value: in no user, system or tool message."""
MATCHING = (
    "values match after normalisation: text NFKC-folded, case-folded, letters and digits only"
    " (whitespace and punctuation dropped); numbers as numbers (100 = 100.00); a value inside a"
    f" longer text counts when it is a run of up to {MAX_NGRAM} words, a line, or a number there"
)

_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
_FIELD_LINE = re.compile(r"^[ \t]*(?:-[ \t]+)?([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_WORDS = re.compile(r"\S+")
MAX_FIELD_VALUES = 20_000
"""The most ``(field, value)`` pairs read from one tool result."""
_YAML_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LINK = re.compile(r"(?:https?://)?(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?::\d+)?(?:/[^\s<>\"')\]]*)?")
MAX_LINKS = 256
"""The most links read in one argument (more: the argument counts as carrying an unknown one)."""


def links_in(value: Any) -> list[str] | None:
    """The links (web addresses, with or without a scheme, and email addresses) in an argument's
    text; None when there are more than :data:`MAX_LINKS`."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = unicodedata.normalize("NFKC", text[:MAX_SOURCE_CHARS])
    emails = _EMAIL.findall(text)
    links = [m.rstrip(".,;:!?") for m in _LINK.findall(_EMAIL.sub(" ", text))]
    found = [bare for x in (*emails, *links) if (bare := _bare(x))]
    return None if len(found) > MAX_LINKS else found


def _bare(link: str) -> str:
    """A link without its scheme and ``www.`` (``https://www.a.com/x`` is ``a.com/x``)."""
    return re.sub(r"^(?:https?://)?(?:www\.)?", "", link, flags=re.IGNORECASE).rstrip("/")


class ProvenanceOverflow(GovernorError):
    """The session's index reached :data:`MAX_KEYS` (the check fails closed)."""


_NOT_ALNUM = re.compile(r"[\W_]+")


def norm_text(value: str) -> str:
    """Letters and digits of the NFKC- and case-folded text."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", value).casefold())


def canon_number(value: float) -> str:
    return "#" + repr(float(value))


def number_of(value: Any) -> float | None:
    """A finite number from a number or a numeric text (currency signs, thousands commas and
    surrounding punctuation allowed); None otherwise (bools are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        match = _NUMBER.fullmatch(value.strip().strip("$€£¥ ,;:()"))
        if match:
            try:
                number = float(match.group().replace(",", ""))
            except ValueError:
                return None
            return number if math.isfinite(number) else None
    return None


@functools.lru_cache(maxsize=512)
def value_keys(value: str) -> frozenset[str]:
    """The keys one source text contributes (see the module doc); the rules of a policy and a
    check and its commit read the same messages, so recent texts are remembered."""
    return frozenset(_value_keys(value))


def _value_keys(value: str) -> set[str]:
    value = value[:MAX_SOURCE_CHARS]
    keys: set[str] = set()
    whole = norm_text(value)
    if whole and len(whole) <= MAX_LINE_CHARS:
        keys.add(whole)
    for line in value.splitlines():
        n = norm_text(line)
        if n and len(n) <= MAX_LINE_CHARS:
            keys.add(n)
        # a YAML or JSON line: the part after its key
        _, sep, rest = line.partition(": ")
        if sep:
            r = norm_text(rest)
            if r and len(r) <= MAX_LINE_CHARS:
                keys.add(r)
    words = [norm_text(w) for w in _WORDS.findall(value)]
    words = [w for w in words if w]
    for i in range(len(words)):
        run = ""
        for j in range(i, min(i + MAX_NGRAM, len(words))):
            run += words[j]
            if len(run) > MAX_KEY_CHARS:
                break
            keys.add(run)
    if "." in value or "@" in value:
        for link in links_in(value) or ():
            host = link.partition("/")[0]
            labels = host.split(".")
            # the link, and its host without trailing labels ("a.com.Then" ends a sentence)
            forms = [link, *(".".join(labels[:k]) for k in range(2, len(labels) + 1))]
            for form in forms:
                n = norm_text(form)
                if n and len(n) <= MAX_LINE_CHARS:
                    keys.add(n)
    for m in _NUMBER.finditer(value):
        number = number_of(m.group())
        if number is not None:
            keys.add(canon_number(number))
            keys.add(canon_number(abs(number)))
    return keys


def fields_of(content: str) -> list[tuple[str, str]]:
    """The ``(field, value)`` pairs of a tool result: the keys of its JSON objects, else of its
    YAML mappings (a list under a key gives each item to that key; text inside a quoted or block
    value is never read as a field), else its ``key: value`` lines (a result in another form has
    none). At most :data:`MAX_FIELD_VALUES` pairs; each container is read once (YAML aliases)."""
    content = content[:MAX_SOURCE_CHARS]
    data = _structured(content)
    if not isinstance(data, (dict, list)):
        return [(m.group(1), m.group(2).strip("'\"")) for m in _FIELD_LINE.finditer(content)]
    out: list[tuple[str, str]] = []
    opened: set[int] = set()
    stack: list[tuple[str, Any]] = [("", data)]
    while stack and len(out) < MAX_FIELD_VALUES:
        key, v = stack.pop()
        if isinstance(v, (dict, list)):
            if id(v) in opened:
                continue
            opened.add(id(v))
            if isinstance(v, dict):
                stack.extend((str(k), x) for k, x in v.items())
            else:
                stack.extend((key, x) for x in v)
        elif key and v is not None:
            out.append((key, v if isinstance(v, str) else json.dumps(v)))
    return out


def _structured(content: str) -> Any:
    """The result as JSON, else as YAML (every scalar a text: no dates or numbers guessed), else
    None."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        pass
    if ":" not in content:
        return None
    try:  # the base loader builds only texts, lists and dicts
        return yaml.load(content, Loader=_YAML_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def argument_keys(value: Any) -> list[tuple[str, ...]] | None:
    """For each value in an argument (each leaf of a list or object), the keys any one of which
    names it; None when a leaf has no key (an empty value: from nowhere)."""
    leaves: list[tuple[str, ...]] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif v is None:
            return None
        else:
            keys: list[str] = []
            number = number_of(v)
            if number is not None:
                keys.append(canon_number(number))
            text = norm_text(v if isinstance(v, str) else str(v))
            if text:
                keys.append(text)
            if isinstance(v, str) and "." in v:  # a web address without its scheme and www.
                bare = norm_text(_bare(v))
                if bare and bare != text:
                    keys.append(bare)
            if not keys:
                return None
            leaves.append(tuple(keys))
    return leaves or None


def _merge(levels: tuple[frozenset[str], ...], new: frozenset[str]) -> tuple[frozenset[str], ...]:
    """Add ``new`` as the smallest level, merging while the level before is not larger."""
    out = list(levels)
    while out and len(out[-1]) <= len(new):
        new = out.pop() | new
    out.append(new)
    return tuple(out)


@dataclass(frozen=True)
class Seen:
    """A session's provenance index: ``source\\x1fkey`` strings in levels (see the module doc),
    the messages indexed so far, whether an untrusted result was seen, and the calls of the
    latest assistant message (to name the tool of each result)."""

    levels: tuple[frozenset[str], ...] = ()
    indexed: int = 0
    untrusted: bool = False
    calls: Mapping[str, str] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(len(level) for level in self.levels)

    def has(self, source: str, key: str) -> bool:
        probe = f"{source}\x1f{key}"
        return any(probe in level for level in self.levels)

    def to_json(self) -> dict[str, Any]:
        return {
            "levels": [sorted(level) for level in self.levels],
            "indexed": self.indexed,
            "untrusted": self.untrusted,
            "calls": dict(self.calls),
        }

    @staticmethod
    def from_json(data: Any, where: str) -> Seen:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: {expected('a provenance index', data)}")
        levels = tuple(frozenset(str(k) for k in level) for level in data["levels"])
        calls = {str(k): str(v) for k, v in dict(data.get("calls") or {}).items()}
        return Seen(levels, int(data["indexed"]), bool(data["untrusted"]), calls)


@dataclass(frozen=True)
class Sources:
    """What an index records: the source tags its vocabulary reads, the tool groups and the
    trusted tools."""

    tags: frozenset[str] = frozenset()
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)
    trusted: frozenset[str] = frozenset()

    @property
    def fields(self) -> dict[str, frozenset[str]]:
        """``tool:NAME`` to the fields of its results a ``tool:NAME.FIELD`` source reads."""
        out: dict[str, set[str]] = {}
        for tag in self.tags:
            head, dot, name = tag.rpartition(".")
            if dot and head.startswith("tool:"):
                out.setdefault(head, set()).add(name)
        return {k: frozenset(v) for k, v in out.items()}

    def is_trusted(self, tool: str | None) -> bool:
        return tool is not None and tool in self.trusted

    def tags_of(self, role: str, tool: str | None) -> list[str]:
        """The source tags a message of this role (and tool) is recorded under."""
        if role == "user":
            found = ["user", "trusted"]
        elif role == "system":
            found = ["system", "trusted"]
        else:
            found = ["tool", "trusted" if self.is_trusted(tool) else "untrusted"]
            if tool is not None:
                found.append(f"tool:{tool}")
                found += [f"group:{g}" for g, members in self.groups.items() if tool in members]
        return [t for t in found if t in self.tags]

    def extended(self, seen: Seen, messages: Sequence[Message]) -> Seen:
        """``seen`` with the messages after ``seen.indexed`` read in (``seen`` is unchanged)."""
        if seen.indexed >= len(messages):
            return seen
        new: set[str] = set()
        calls = dict(seen.calls)
        untrusted = seen.untrusted
        for m in messages[seen.indexed :]:
            tool = None
            if m.role == "assistant":
                if m.tool_calls:
                    calls = {c.id: c.name for c in m.tool_calls}
                continue
            if m.role == "tool":
                tool = calls.get(m.tool_call_id or "")
                untrusted = untrusted or not self.is_trusted(tool)
            tags = self.tags_of(m.role, tool)
            if tags and m.content:
                keys = value_keys(m.content)
                new.update(f"{t}\x1f{k}" for t in tags for k in keys)
            if m.role == "tool" and tool is not None and f"tool:{tool}" in self.fields:
                wanted = self.fields[f"tool:{tool}"]
                for name, value in fields_of(m.content or ""):
                    if name in wanted:
                        tag = f"tool:{tool}.{name}"
                        new.update(f"{tag}\x1f{k}" for k in value_keys(value))
        if seen.size + len(new) > MAX_KEYS:
            raise ProvenanceOverflow(
                f"provenance index: expected at most {MAX_KEYS} values in a session,"
                f" found {seen.size + len(new)}"
            )
        levels = _merge(seen.levels, frozenset(new)) if new else seen.levels
        return Seen(levels, len(messages), untrusted, calls)

    def links_found_in(self, seen: Seen, value: Any, sources: Iterable[str]) -> bool:
        """Whether every link inside ``value``'s text appeared in one of ``sources``."""
        links = links_in(value)
        wanted = tuple(sources)
        return links is not None and all(self.found_in(seen, x, wanted) for x in links)

    def found_in(self, seen: Seen, value: Any, sources: Iterable[str]) -> bool:
        """Whether every value in ``value`` appeared in one of ``sources`` (``nowhere``: in no
        user, system or tool message)."""
        leaves = argument_keys(value)
        wanted = tuple(sources)
        if leaves is None:
            return NOWHERE in wanted
        named = tuple(s for s in wanted if s != NOWHERE)

        def has(tags: Iterable[str], keys: tuple[str, ...]) -> bool:
            return any(seen.has(t, k) for t in tags for k in keys)

        for keys in leaves:
            if has(named, keys):
                continue
            if NOWHERE in wanted and not has(("user", "system", "tool"), keys):
                continue
            return False
        return True
