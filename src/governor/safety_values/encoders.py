"""Observation models for a learned safety value Q(z, a): what the network reads and how.

- ``state`` (privileged): the task's state features (driving: (2 x / goal_x - 1,
  2 y / road_width - 1, cos theta, sin theta); commerce: :class:`~governor.worlds.commerce.task.
  CommerceTask`) through an MLP (hidden sizes [100, 100], tanh) with one output per action.
- ``text``: the text observation an LLM reads, as tokens (:mod:`~governor.safety_values.text_tokens`).
  Token embedding = word embedding (for a number: the ``[NUM]`` embedding scaled by its value)
  plus a learned position embedding. Layer 1: each number token attends over the whole text (a
  number's meaning is in the words around it: "m away from the left edge", "degrees
  counter-clockwise"); layer 2: the number tokens attend to each other. Both layers are pre-norm
  transformer blocks with a learned relative-position bias per head (layer 1: by token distance,
  clipped at ``rel``; layer 2: by distance in the order of the numbers); then attention pooling
  with a few learned queries and an MLP head (two tanh layers) with one output per action. Word
  tokens produce no outputs of their own; they are read as keys and values. Layer 1 reads the
  keys without a layer norm, so a number's embedding keeps the scale its value gave it.
  What differs by task (:class:`~governor.safety_values.tasks.Task`): on the commerce page the rows
  sit at varying positions, so there is no absolute position embedding (it would only add noise
  to a price) and layer 1 reads a window of 12 tokens on each side of a number, the words that
  say what it is, which keeps the cost linear in the page's length; and the actions are the
  page's element ids (``[0]`` checks out, ``[i]`` removes row i), so Q(z, a) is the head applied
  to the pooled text and the representation of the number token inside ``[a]`` (a learned
  "absent" vector when the page has no element a), the usual way web agents score clickable
  elements. Networks output Q in the task's unit of margin (commerce: the budget).

An :class:`ObservationModel` turns states (training: the simulator knows them) or real
observations (deployment) into the network's input tensors; for text both go through tokens.
What it reads comes from the task (:class:`~governor.safety_values.tasks.Task`): no world is
imported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from governor.errors import ConfigError, EnvError, expected
from governor.safety_values.tasks import TaskParams, task_of
from governor.safety_values.text_net import TextQNet
from governor.safety_values.text_tokens import Vocabulary

OBSERVATIONS = ("state", "text")
Inputs = tuple[torch.Tensor, ...]


class StateQNet(nn.Module):
    """Q for each action from state features (N, inputs): an MLP with tanh hidden layers.

    Q = ``scale`` x the last layer's output: the task's unit of margin (commerce: the budget), so
    the layers work on numbers near 1; a plain attribute, not a weight.
    """

    def __init__(
        self,
        hidden: Sequence[int] = (100, 100),
        inputs: int = 4,
        actions: int = 3,
        scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.scale = scale
        layers: list[nn.Module] = []
        width = inputs
        for size in hidden:
            layers += [nn.Linear(width, size), nn.Tanh()]
            width = size
        self.mlp = nn.Sequential(*layers, nn.Linear(width, actions))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.mlp(features) * self.scale


class ObservationModel:
    """The network of one observation kind and its inputs from states or observations.

    The task comes from the type of ``params`` (:func:`~governor.safety_values.tasks.task_of`).
    """

    def __init__(self, kind: str, params: TaskParams, settings: Mapping[str, Any]) -> None:
        if kind not in OBSERVATIONS:
            raise ConfigError(f"obs: {expected(' or '.join(OBSERVATIONS), kind)}")
        self.kind, self.params, self.settings = kind, params, dict(settings)
        self.task = task_of(params)
        words = self.settings.get("vocabulary")
        self.vocab = self.task.vocabulary() if words is None else Vocabulary(words)
        self.templates = self.task.templates(self.vocab)
        if kind == "text":
            self.settings["vocabulary"] = list(self.vocab.words)

    def network(self) -> nn.Module:
        """A fresh network for this observation kind."""
        s, task = self.settings, self.task
        if self.kind == "state":
            hidden = tuple(s.get("hidden", (100, 100)))
            return StateQNet(hidden, task.feature_dim, task.n_actions, task.q_scale)
        elements = (self.vocab.id("["), self.vocab.id("]")) if task.element_actions else None
        return TextQNet(
            len(self.vocab),
            d_model=int(s.get("d_model", 16)),
            heads=int(s.get("heads", 1)),
            ff=int(s.get("ff", 32)),
            pool=int(s.get("pool", 4)),
            head_hidden=int(s.get("head_hidden", 128)),
            rel=int(s.get("rel", 12)),
            max_len=task.max_tokens,
            actions=task.n_actions,
            elements=elements,
            scale=task.q_scale,
            window=task.read_window,
        )

    def from_states(self, states: np.ndarray) -> Inputs:
        """Network inputs for states (N, state_dim); for text, the tokens of their observations."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, self.task.state_dim)
        if self.kind == "state":
            return (torch.from_numpy(self.task.features(states)),)
        ids, values = self.templates.encode_states(states)
        return torch.from_numpy(ids), torch.from_numpy(values)

    def from_observation(self, observation: Any) -> Inputs:
        """Network inputs (batch of one) for an environment observation."""
        if self.kind == "state":
            return self.from_states(self.task.state_of(observation)[None, :])
        text = observation.get("text") if isinstance(observation, Mapping) else observation
        if not isinstance(text, str):
            raise EnvError(f"observation text: {expected('a string', type(text).__name__)}")
        tokens = self.vocab.encode(text)
        return torch.from_numpy(tokens.ids[None, :]), torch.from_numpy(tokens.values[None, :])
