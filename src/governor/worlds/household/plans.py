"""Plan steps for household planners: the program in planner form, what a step achieves, the
steps that make a proposition true or false, and what an explanation asks for.

Script lines are in the planner's form: ``[VERB] <object>`` with the scene's class names and no
ids, as :func:`governor.worlds.household.env.available_actions` lists them.
"""

from __future__ import annotations

import functools
import re

from governor.errors import EnvError, SpecError
from governor.ltl.parser import parse
from governor.ltl.syntax import Formula
from governor.worlds.household.env import (
    PLANNER_VERBS,
    SceneGraph,
    State,
    Task,
    default_scene,
    parse_action,
    preview,
)

DONE = "[DONE]"
_OWED = re.compile(r"still to meet: \[([^\]]*)\]")
_ATOM = re.compile(r"\b([a-z_]+)\(([a-z_]+(?:, [a-z_]+)?)\)")
_AS_WALK = {"FIND": "WALK", "RUN": "WALK"}
_TOGGLES = {"is_open": ("OPEN", "CLOSE"), "is_switchedon": ("SWITCHON", "SWITCHOFF")}


def intentions(task: Task, scene: SceneGraph | None = None) -> list[str]:
    """The task's program in planner form: names resolved, FIND and RUN as WALK, verbs no planner
    lists (TURNTO, LOOKAT, TYPE, ...) dropped, repeats dropped; ``[DONE]`` not included."""
    scene = scene or default_scene()
    out: list[str] = []
    for line in task.program:
        act = parse_action(line)
        verb = _AS_WALK.get(act.verb, act.verb)
        if verb not in PLANNER_VERBS:
            continue
        names = [scene.resolve(n) or n for n in act.objects]
        text = " ".join([f"[{verb}]", *(f"<{n}>" for n in names)])
        if not out or out[-1] != text:
            out.append(text)
    return out


def objects_of(action: str) -> tuple[str, ...]:
    """The object names of a script line (none when it does not parse)."""
    try:
        return parse_action(action).objects
    except EnvError:
        return ()


@functools.lru_cache(maxsize=8192)
def predict_labels(state: State, action: str) -> frozenset[str]:
    """The labels after ``action`` from ``state`` (unchanged when a precondition fails)."""
    return preview(state, action)[1]


def effects(step: str) -> list[tuple[str, bool]]:
    """The propositions a plan step makes true or false (none known for SIT, LIE, ...)."""
    act = parse_action(step)
    objs = act.objects
    if act.verb in ("PUTIN", "PUTBACK"):
        return [(f"is_{'in' if act.verb == 'PUTIN' else 'on'}({objs[0]}, {objs[1]})", True)]
    if not objs:
        return []
    for predicate, (on, off) in _TOGGLES.items():
        if act.verb in (on, off):
            return [(f"{predicate}({objs[0]})", act.verb == on)]
    known = {"WALK": "agent_at", "GRAB": "is_grabbed"}
    return [(f"{known[act.verb]}({objs[0]})", True)] if act.verb in known else []


def achieved(step: str, labels: frozenset[str]) -> bool:
    """Whether every known effect of ``step`` already holds (so the step can be skipped)."""
    wanted = effects(step)
    return bool(wanted) and all((p in labels) == v for p, v in wanted)


def steps_to(proposition: str, value: bool) -> list[str]:
    """Plan steps that make ``proposition`` have ``value``; ``[]`` when none is known."""
    m = _ATOM.fullmatch(proposition)
    if m is None:
        return []
    predicate, args = m.group(1), m.group(2).split(", ")
    if predicate in _TOGGLES:
        on, off = _TOGGLES[predicate]
        return [f"[{on if value else off}] <{args[0]}>"]
    if not value:
        return []
    if predicate == "agent_at":
        return [f"[WALK] <{args[0]}>"]
    if predicate == "is_grabbed":
        return [f"[GRAB] <{args[0]}>"]
    if predicate in ("is_in", "is_on") and len(args) == 2:
        verb = "PUTIN" if predicate == "is_in" else "PUTBACK"
        return [f"[GRAB] <{args[0]}>", f"[OPEN] <{args[1]}>", f"[{verb}] <{args[0]}> <{args[1]}>"]
    return []


def obligations(text: str) -> list[Formula]:
    """The formulas written ``still to meet: [...]`` in an explanation (unparsable ones left out)."""
    out = []
    for written in _OWED.findall(text):
        try:
            out.append(parse(written))
        except SpecError:
            continue
    return out


def mentioned(text: str) -> list[str]:
    """The propositions written in ``text`` (``agent_at(kitchen)``, ``is_in(pie, fridge)``)."""
    return list(dict.fromkeys(f"{p}({args})" for p, args in _ATOM.findall(text)))
