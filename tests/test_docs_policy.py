"""docs/policy.md documents every key the policy-file and overlay-file readers accept.

The accepted keys are read from the readers' own constants, never listed here: each group below
names the doc heading whose tables document a constant's keys. A second test reads the readers'
source and fails on a ``mapping(...)`` call whose allowed keys are an inline literal or a constant
no group covers, so a new section cannot go undocumented. The worked examples in the doc, and the
example policies, are loaded.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from governor.guard.spec import (
    guard_policy,
    mode_section,
    mode_spec,
    parts,
    propositions,
    stream_section,
    tool_section,
    value_section,
)
from governor.overlays import loader, rigidity, rules, validate

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "policy.md"

READERS: tuple[ModuleType, ...] = (
    guard_policy,
    parts,
    stream_section,
    tool_section,
    value_section,
    mode_section,
    propositions,
)
"""The modules that read a policy file through ``mapping(value, at, allowed, ...)``."""

GROUPS: tuple[tuple[str, Iterable[str], tuple[str, ...]], ...] = (
    # (the doc heading, the accepted keys, the constants they come from as module.NAME)
    ("## Top level", guard_policy.SECTIONS, ("guard_policy.SECTIONS",)),
    ("### `upstream`", guard_policy.UPSTREAM_KEYS, ("guard_policy.UPSTREAM_KEYS",)),
    ("### `observer`", guard_policy.OBSERVER_KEYS, ("guard_policy.OBSERVER_KEYS",)),
    ("### `overlays`", (*parts.SHIPPED_OVERLAYS, "none"), ()),
    ("### `propositions`", propositions.PROPOSITION_KEYS, ("propositions.PROPOSITION_KEYS",)),
    ("### `propositions`", propositions.PROPOSITION_KINDS, ()),
    ("#### `propositions.NAME.sum`", propositions.SUM_KEYS, ("propositions.SUM_KEYS",)),
    ("#### `propositions.NAME.where`", propositions.CONDITION_KEYS, ("propositions.CONDITION_KEYS",)),
    ("### `ltl`", parts.LTL_RULE_KEYS, ("parts.LTL_RULE_KEYS",)),
    ("### `fallbacks`", parts.FALLBACK_KEYS, ("parts.FALLBACK_KEYS",)),
    ("### `checks`", guard_policy.CHECK_KEYS, ("guard_policy.CHECK_KEYS",)),
    ("### `stream`", stream_section.STREAM_KEYS, ("stream_section.STREAM_KEYS",)),
    ("### `tools`", tool_section.TOOLS_KEYS, ("tool_section.TOOLS_KEYS",)),
    ("### `safety_value`", value_section.KEYS, ("value_section.KEYS",)),
    ("### `supervision`", mode_section.KEYS, ("mode_section.KEYS",)),
    ("#### `supervision.modes.NAME`", mode_section.MODE_KEYS,
     ("mode_section.MODE_KEYS",)),
    ("#### `supervision.rules`", mode_section.RULE_KEYS, ("mode_section.RULE_KEYS",)),
    ("#### `supervision.select`", mode_section.SELECT_KEYS,
     ("mode_section.SELECT_KEYS",)),
    ("#### `supervision.gating`", mode_section.GATING_KEYS,
     ("mode_section.GATING_KEYS",)),
    ("#### `supervision.overrides`",
     (*mode_section.OVERRIDE_KEYS,
      *(k for ks in mode_section.OVERRIDE_PARAMS.values() for k in ks)),
     ("mode_section.OVERRIDE_KEYS", "mode_section.OVERRIDE_PARAMS")),
    ("#### `supervision.overrides`", mode_spec.OVERRIDE_KINDS, ()),
    ("#### `supervision.limits`", mode_section.LIMITS_KEYS,
     ("mode_section.LIMITS_KEYS",)),
    ("#### `supervision.time_window`", mode_section.TIME_WINDOW_KEYS,
     ("mode_section.TIME_WINDOW_KEYS",)),
    ("#### Classifiers", mode_spec.CLASSIFIERS, ()),
    ("### Overlay file: top level", loader.TOP_LEVEL, ()),
    ("### Overlay rule", loader.FIELDS, ()),
    ("#### `bounds` and `scope`", (*validate.BOUNDS_KEYS, *validate.SCOPE_KEYS), ()),
    ("#### `margin`", rigidity.FIELDS, ()),
    ("#### Overlay kinds", rules.KINDS, ()),
)  # fmt: skip

ROW = re.compile(r"^\|\s*`([^`]+)`")


def sections(text: str) -> dict[str, list[str]]:
    """Each heading line of the doc and the lines under it, to the next heading."""
    out: dict[str, list[str]] = {}
    current, fenced = "", False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"^#{1,6} ", line):
            current = line.strip()
            if current in out:
                raise AssertionError(f"docs/policy.md: heading {current!r} appears twice")
            out[current] = []
        elif current:
            out[current].append(line)
    return out


def documented(body: Iterable[str]) -> set[str]:
    """The names in the first cell of the table rows of a section (`key` or `a`, `b`)."""
    names: set[str] = set()
    for line in body:
        if ROW.match(line):
            first = line.split("|")[1]
            names |= set(re.findall(r"`([^`]+)`", first))
    return names


def undocumented(doc: str) -> list[str]:
    found = sections(doc)
    missing = []
    for heading, keys, _ in GROUPS:
        if heading not in found:
            missing.append(f"no heading {heading!r}")
            continue
        have = documented(found[heading])
        missing += [f"{heading}: `{k}`" for k in keys if k not in have]
    return missing


def test_every_accepted_key_is_documented() -> None:
    missing = undocumented(DOC.read_text(encoding="utf-8"))
    assert not missing, "docs/policy.md does not document:\n" + "\n".join(missing)


def test_a_key_taken_out_of_the_doc_is_reported() -> None:
    doc = DOC.read_text(encoding="utf-8")
    row = "| `chunk_tokens` |"
    assert row in doc
    assert undocumented(doc.replace(row, "| chunk tokens |")) == ["### `stream`: `chunk_tokens`"]


def _key_constants(module: ModuleType) -> list[tuple[int, set[str], bool]]:
    """For each ``mapping(...)`` call in ``module``: its line, the module-level names its allowed
    keys are made of, and whether they include an inline text literal."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "mapping"):
            continue
        allowed = node.args[2] if len(node.args) > 2 else None
        if allowed is None:
            continue
        inner = list(ast.walk(allowed))
        literal = any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in inner)
        used = {n.id for n in inner if isinstance(n, ast.Name) and n.id.isupper()}
        out.append((node.lineno, used, literal))
    return out


def test_every_reader_takes_its_keys_from_a_documented_constant() -> None:
    covered = {name for _, _, names in GROUPS for name in names}
    problems = []
    for module in READERS:
        short = module.__name__.rsplit(".", 1)[-1]
        calls = _key_constants(module)
        assert calls, f"{module.__name__}: no mapping(...) call found; is it still a reader?"
        for line, used, literal in calls:
            if literal:
                problems.append(f"{module.__name__}:{line}: keys inline; name them as a constant")
            if not used:
                problems.append(f"{module.__name__}:{line}: keys from no module constant")
            problems += [
                f"{module.__name__}:{line}: {short}.{n} is not in this test's GROUPS"
                for n in sorted(used)
                if f"{short}.{n}" not in covered
            ]
    assert not problems, "\n".join(problems)


def _blocks(kind: str) -> list[str]:
    doc = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", doc, flags=re.S)
    return [b for b in blocks if b.startswith(f"# {kind}\n")]


@pytest.mark.parametrize("block", _blocks("a policy file"))
def test_the_docs_policy_examples_load(block: str) -> None:
    loaded = guard_policy.policy_from_mapping(
        yaml.safe_load(block),
        source="docs/policy.md",
        base_dir=ROOT / "examples" / "policies",
    )
    assert loaded.ltl or loaded.overlays


@pytest.mark.parametrize("block", _blocks("an overlay file"))
def test_the_docs_overlay_examples_load(block: str) -> None:
    assert loader.parse_overlays(yaml.safe_load(block), where="docs/policy.md")


def test_the_doc_has_its_examples() -> None:
    assert len(_blocks("a policy file")) >= 2 and len(_blocks("an overlay file")) >= 1


@pytest.mark.parametrize(
    "path", sorted(p.name for p in (ROOT / "examples" / "policies").glob("*.yaml"))
)
def test_the_example_policies_load(path: str) -> None:
    if path == "safety_value.yaml":
        pytest.importorskip("torch")
        import governor.worlds.driving.task  # noqa: F401  (registers the driving env)
    guard_policy.load_policy(ROOT / "examples" / "policies" / path)
