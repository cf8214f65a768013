"""What :class:`~governor.safety_values.llm_q.value.LLMQ` learns from: token transitions, targets, the loss.

:class:`TokenEnvs` step the task's envs and turn each physical step into token transitions
(:func:`step_transitions`); :class:`TokenReplay` keeps them; :func:`td_loss` fits Q to their
token-level targets (:func:`token_targets`).

Token time and physical time (ReGuard section 4, appendix A.1): at each physical step the model
answers with K tokens (K = 1 for driving, Table 5: the letter) and then EOS, and every token is an
action. A content token keeps the level l(s_t), never ends the episode and bootstraps with
gamma = 1 from the next token position; EOS carries l(s_{t+1}), ends the episode when s_{t+1}
failed or reached the goal, and bootstraps with gamma from the next physical prompt, at the
position where its first answer token is predicted::

    y = min(l(s_t), Q'(z_{t,k+1}))                                       content token
    y = l(s_{t+1})                                                  EOS, s_{t+1} terminal
    y = (1 - gamma) l(s_{t+1}) + gamma min(l(s_{t+1}), Q'(z_{t+1}))         EOS otherwise

with Q'(z) = Q_target(z, a*), a* = the argmax of Q_online over the actions at z (double Q,
:func:`~governor.safety_values.ddqn.safety_target`). The actions at a position: only EOS after the
K-th token; the letters in V' at a task's prompt (see :mod:`~governor.safety_values.llm_q.value`); V'
elsewhere.

Imports torch, the DDQN target and V' (:mod:`~governor.safety_values.llm_q.decode`);
:class:`~governor.safety_values.llm_q.value.LLMQ` for types only, and no world: the envs are the task's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from governor.config import check_range
from governor.errors import ConfigError
from governor.safety_values.ddqn import safety_target
from governor.safety_values.llm_q.decode import answer_mask, top_p_mask
from governor.safety_values.llm_q.model import TokenIds

if TYPE_CHECKING:
    from governor.safety_values.llm_q.value import LLMQ

NextActions = Literal["choices", "top_p", "eos"]


@dataclasses.dataclass(frozen=True)
class TokenTransition:
    """One token as an action: the prompt, the token, the next prompt, its level, and kind."""

    prompt: np.ndarray  # token ids before the token
    token: int
    next_prompt: np.ndarray  # token ids where the next action is chosen
    level: float  # l(s_t) for a content token, l(s_{t+1}) for EOS
    done: bool  # EOS into a failed or goal state
    eos: bool
    next_actions: NextActions  # which tokens are actions at next_prompt


def step_transitions(
    prompt: TokenIds,
    tokens: Sequence[int],
    eos_id: int,
    next_prompt: TokenIds,
    level: float,
    next_level: float,
    done: bool,
    max_tokens: int | None = None,
) -> list[TokenTransition]:
    """The token transitions of one physical step: ``tokens`` (at most K) and then EOS.

    After the K-th token (``max_tokens``, default len(tokens)) EOS is the only action.
    """
    limit = len(tokens) if max_tokens is None else max_tokens
    out, context = [], np.asarray(prompt, dtype=np.int64)
    for k, token in enumerate(tokens):
        after = np.append(context, token)
        kind: NextActions = "eos" if k + 1 >= limit else "top_p"
        out.append(TokenTransition(context, int(token), after, float(level), False, False, kind))
        context = after
    nxt = np.asarray(next_prompt, dtype=np.int64)
    out.append(TokenTransition(context, eos_id, nxt, float(next_level), done, True, "choices"))
    return out


def token_targets(
    levels: torch.Tensor,
    done: torch.Tensor,
    eos: torch.Tensor,
    q_next_online: torch.Tensor,
    q_next_target: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """y of a batch: gamma at EOS, 1 at content tokens (which never end the episode)."""
    physical = safety_target(levels, done & eos, q_next_online, q_next_target, gamma)
    content = safety_target(levels, torch.zeros_like(done), q_next_online, q_next_target, 1.0)
    return torch.where(eos, physical, content)


def action_masks(
    llm_q: LLMQ, base_logits: torch.Tensor, kinds: Sequence[NextActions]
) -> torch.Tensor:
    """The actions (bool, like ``base_logits``) at positions of the given kinds."""
    p, choices = llm_q.settings.top_p, list(llm_q.choice_ids)
    mask = top_p_mask(base_logits, p)
    for i, kind in enumerate(kinds):
        if kind != "top_p":
            mask[i] = False
        if kind == "eos":
            mask[i, llm_q.eos_id] = True
        elif kind == "choices":
            mask[i, choices] = answer_mask(base_logits[i : i + 1], p, choices)[0]
    return mask


def td_loss(
    llm_q: LLMQ,
    batch: Sequence[TokenTransition],
    target: Mapping[str, torch.Tensor],
    gamma: float,
) -> torch.Tensor:
    """Mean squared error of Q_online(z, token) to the token-level target (module docstring)."""
    device = llm_q.device
    nxt = [t.next_prompt for t in batch]
    with torch.no_grad():
        allowed = action_masks(
            llm_q, llm_q.logits(nxt, adapted=False), [t.next_actions for t in batch]
        )
        y = token_targets(
            torch.tensor([t.level for t in batch], dtype=torch.float32, device=device),
            torch.tensor([t.done for t in batch], device=device),
            torch.tensor([t.eos for t in batch], device=device),
            llm_q.logits(nxt).masked_fill(~allowed, -torch.inf),
            llm_q.logits(nxt, lora=target),
            gamma,
        )
    tokens = torch.tensor([t.token for t in batch], device=device)
    q = llm_q.logits([t.prompt for t in batch]).gather(1, tokens[:, None]).squeeze(1)
    return torch.nn.functional.mse_loss(q, y)


class TokenReplay:
    """A ring buffer of token transitions; the oldest are overwritten once it is full."""

    def __init__(self, capacity: int) -> None:
        check_range("buffer_size", capacity, 1, 1e9)
        self.capacity, self.cursor = int(capacity), 0
        self.items: list[TokenTransition] = []

    def __len__(self) -> int:
        return len(self.items)

    def extend(self, transitions: Sequence[TokenTransition]) -> None:
        for t in transitions:
            if len(self.items) < self.capacity:
                self.items.append(t)
            else:
                self.items[self.cursor] = t
            self.cursor = (self.cursor + 1) % self.capacity

    def sample(self, n: int, rng: np.random.Generator) -> list[TokenTransition]:
        """``n`` transitions drawn uniformly with replacement."""
        if not self.items:
            raise ConfigError("replay buffer: expected transitions to sample, found none")
        return [self.items[i] for i in rng.integers(0, len(self.items), n)]


class TokenEnvs:
    """The task's vector envs (driving: cars) answering through ``llm_q``, in tokens."""

    def __init__(self, llm_q: LLMQ, n: int, rng: np.random.Generator) -> None:
        self.q, self.rng = llm_q, rng
        self.envs = llm_q.task.vector_envs(n, rng)
        self.prompts = [self._prompt(s) for s in self.envs.states]

    def _prompt(self, state: np.ndarray) -> np.ndarray:
        return np.asarray(self.q.observation_ids({"state": state}), dtype=np.int64)

    def step(self, eps: float) -> list[TokenTransition]:
        """Step every env once, epsilon-greedy over its letters in V'; their token transitions."""
        q = self.q
        with torch.no_grad():
            allowed = answer_mask(
                q.logits(self.prompts, adapted=False), q.settings.top_p, q.choice_ids
            )
            values = q.logits(self.prompts)[:, list(q.choice_ids)].masked_fill(~allowed, -torch.inf)
        allowed_np, greedy = allowed.cpu().numpy(), values.argmax(dim=1).cpu().numpy()
        actions = np.array(
            [
                self.rng.choice(np.flatnonzero(a)) if self.rng.random() < eps else g
                for a, g in zip(allowed_np, greedy, strict=True)
            ],
            dtype=np.int64,
        )
        level = q.task.margin(self.envs.states)
        moved = self.envs.step(actions)  # restarts an env whose episode ended (its t is then 0)
        out: list[TokenTransition] = []
        for i, a in enumerate(actions):
            following = self._prompt(moved.next_states[i])
            out += step_transitions(
                self.prompts[i],
                [q.choice_ids[int(a)]],
                q.eos_id,
                following,
                level[i],
                moved.levels[i],
                bool(moved.done[i]),
            )
            restarted = self.envs.t[i] == 0
            self.prompts[i] = self._prompt(self.envs.states[i]) if restarted else following
        return out
