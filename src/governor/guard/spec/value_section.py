"""The ``safety_value`` section of a guard policy: a learned safety value Q(observation, action)
that judges the tool calls of an agent whose actions are discrete (a robot's or a driving
planner's step behind the service)::

    safety_value:
      name: stay_on_road          # the constraint's name (default: safety_value)
      text: keep the car on the road and off the obstacles   # in English (default: the name)
      checkpoint: ../checkpoints/driving_state   # a folder written by `governor train
                                  # safety-value`, relative to the policy file
      env: driving                # optional: refuse a checkpoint trained for another env
      tool: steer                 # the tool whose calls are the actions
      argument: direction         # the dotted path of the action in the call's arguments
      actions: [right, straight, left]   # the argument's values, in the checkpoint's action order
      observation: state          # the dotted path of the observation in the latest tool result
      margin: 0.0                 # a call is admitted iff Q(observation, action) > margin
      recovery: true              # a refused call is replaced by the same call with the safest
                                  # action (argmax Q); false: the policy's fallback text

The observation has one source: the JSON content of the latest ``tool`` message before the call,
at the dotted path ``observation`` (the tool that reports the state, and the action tool itself
when its result carries the new state). For a checkpoint of the ``state`` model it is a list of
the task's state numbers (driving: x, y and the heading in radians, in the world's units); for a
``text`` checkpoint, the text. The checkpoint is loaded with the policy, through the task
registry of :mod:`~governor.safety_values.tasks` (a world registers its env when its task module
is imported; the ``governor`` commands import the shipped worlds'), so a checkpoint that cannot
be loaded, or whose env is not registered, is a :class:`~governor.errors.ConfigError` when the
policy is read. Errors name the file, the path inside it, what was expected and what was found;
unknown keys are errors. Imports the error tree, the task registry, the spec's fields
and the propositions' path reader; the learned values (and torch) only when a policy has this section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from governor.errors import ConfigError
from governor.guard.spec.fields import At, boolean, items, mapping, number, optional_text, text
from governor.guard.spec.propositions import _path
from governor.safety_values.tasks import registered_tasks

if TYPE_CHECKING:
    from governor.safety_values.learned import LearnedQ

KEYS = ("name", "text", "checkpoint", "env", "tool", "argument", "actions", "observation",
        "margin", "recovery")  # fmt: skip
REQUIRED = ("checkpoint", "tool", "argument", "actions", "observation")
DEFAULT_NAME = "safety_value"
ActionValue = str | int


@dataclass(frozen=True)
class SafetyValueSpec:
    """A validated ``safety_value`` section, with its checkpoint loaded (``learned``)."""

    name: str
    text: str
    checkpoint: str
    tool: str
    argument: tuple[str, ...]
    actions: tuple[ActionValue, ...]
    observation: tuple[str, ...]
    margin: float
    recovery: bool
    learned: LearnedQ = field(compare=False, repr=False)

    @property
    def labels(self) -> tuple[str, ...]:
        """The task's names of the actions, in the checkpoint's order ("Steer right", ...)."""
        return self.learned.model.task.safety_filter(self.learned, self.margin, self.name).labels

    def action_of(self, value: Any) -> int | None:
        """The index of the action whose argument value is ``value`` (None: not one of them;
        numbers compare by value, a bool is never one)."""
        if isinstance(value, bool):
            return None
        for i, known in enumerate(self.actions):
            if isinstance(value, (int, float)) and not isinstance(known, str):
                if value == known:
                    return i
            elif type(value) is type(known) and value == known:
                return i
        return None


def safety_value_from(
    raw: Any, at: At, base: Path, *, taken: frozenset[str], supervised: bool
) -> SafetyValueSpec | None:
    """The section (None when absent); ``taken`` are the names of the policy's other
    constraints, ``supervised`` whether the policy has a supervision section."""
    if raw is None:
        return None
    if supervised:
        raise at.error("expected no safety_value section beside a supervision section, found one")
    data = mapping(raw, at, KEYS, REQUIRED)
    name = text(data.get("name", DEFAULT_NAME), at.key("name"))
    if name in taken:
        at.key("name").fail("a name no LTL rule or overlay of the policy has", name)
    learned = _learned(data["checkpoint"], data.get("env"), at, base)
    n_actions = learned.model.task.n_actions
    actions = _actions(data["actions"], at.key("actions"), n_actions, learned.env)
    return SafetyValueSpec(
        name=name,
        text=text(data.get("text", name), at.key("text")),
        checkpoint=data["checkpoint"],
        tool=text(data["tool"], at.key("tool")),
        argument=_path(data["argument"], at.key("argument")),
        actions=actions,
        observation=_path(data["observation"], at.key("observation")),
        margin=number(data.get("margin", 0.0), at.key("margin")),
        recovery=boolean(data.get("recovery", True), at.key("recovery")),
        learned=learned,
    )


def _learned(raw: Any, env: Any, at: At, base: Path) -> LearnedQ:
    """The checkpoint folder ``raw`` (relative to the policy file), loaded."""
    where = at.key("checkpoint")
    directory = base / text(raw, where)
    env = optional_text(env, at.key("env"))
    try:
        from governor.safety_values.learned import LearnedQ
    except ImportError as exc:
        found = f"none ({exc})"
        where.fail("torch for a learned safety value (pip install -e '.[learn]')", found)
    try:
        return LearnedQ.load(directory, env=env)
    except ConfigError as exc:
        hint = (
            ""
            if registered_tasks()
            else " (no task is registered: a world registers its env when its task module is"
            " imported, e.g. governor.worlds.driving.task)"
        )
        raise where.error(f"{exc}{hint}") from None


def _actions(raw: Any, at: At, n_actions: int, env: str) -> tuple[ActionValue, ...]:
    values = items(raw, at)
    if len(values) != n_actions:
        wanted = f"{n_actions} values (the checkpoint's {env} task has {n_actions} actions)"
        at.fail(wanted, f"{len(values)}: {values!r}")
    out: list[ActionValue] = []
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            at.index(i).fail("a text or an integer (an argument value)", value)
        if value in out:
            at.index(i).fail("a value no other action has", value)
        out.append(value)
    return tuple(out)
