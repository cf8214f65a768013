"""The text network of the learned safety value: number tokens that read the text around them.

See :mod:`~governor.safety_values.encoders` for what it reads and how (the module docstring there
describes the architecture); this module holds the layers.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from governor.errors import ConfigError, expected
from governor.safety_values.text_tokens import NUM_ID, NUMBER_SCALE, PAD_ID


class _Block(nn.Module):
    """Pre-norm attention of queries over keys with a relative-position bias, then a feed-forward.

    Heads are scored without reshaping the (large) keys: each query row is repeated once per head
    with the other heads' components zeroed, so one batched matmul scores every head. Keys have
    no bias (it cancels in the softmax); values have none either (the output layer's absorbs it).
    With ``norm_keys=False`` keys are read as given (token embeddings, whose value scale is the
    number).
    """

    def __init__(self, d: int, heads: int, ff: int, rel: int, norm_keys: bool = True) -> None:
        super().__init__()
        self.heads, self.rel = heads, rel
        self.norm_q, self.norm_ff = nn.LayerNorm(d), nn.LayerNorm(d)
        self.norm_k: nn.Module = nn.LayerNorm(d) if norm_keys else nn.Identity()
        self.q, self.out = nn.Linear(d, d), nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d, bias=False)
        self.bias = nn.Parameter(torch.zeros(heads, 2 * rel + 1))
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        head_of = torch.arange(d) // (d // heads)
        self.register_buffer(
            "head_mask", (head_of[None, :] == torch.arange(heads)[:, None]).float()
        )
        self._offsets: dict[int, torch.Tensor] = {}

    def offsets(self, length: int) -> torch.Tensor:
        """Bias-table columns (length, length): clamp(j - p, -rel, rel) + rel for query p, key j."""
        if length not in self._offsets:
            with torch.inference_mode(False):  # a cache must be usable outside inference mode
                span = torch.arange(length)
                rel = (span[None, :] - span[:, None]).clamp(-self.rel, self.rel) + self.rel
            self._offsets[length] = rel
        return self._offsets[length]

    def forward(
        self, xq: torch.Tensor, xk: torch.Tensor, qpos: torch.Tensor, keep: Any
    ) -> torch.Tensor:
        """Queries ``xq`` (b, n, d) at text positions ``qpos`` (b, n) over keys ``xk`` (b, l, d) at
        positions 0..l-1; ``keep`` (b, l) is False at padding."""
        b, n, d = xq.shape
        h, length = self.heads, xk.shape[1]
        q = self.q(self.norm_q(xq))
        if h > 1:
            q = (q[:, :, None, :] * torch.as_tensor(self.head_mask)).reshape(b, n * h, d)
        k, v = self.kv(self.norm_k(xk)).chunk(2, dim=-1)
        rows = self.bias[:, self.offsets(length)].transpose(0, 1)  # (query p, head, key j)
        bias = rows[qpos.reshape(-1)].reshape(b, n * h, length)
        bias = bias.masked_fill(~keep[:, None, :], float("-inf"))
        scale = 1.0 / math.sqrt(d // h)
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=scale).softmax(dim=-1)
        mixed = torch.bmm(scores, v)
        if h > 1:
            mixed = (mixed.reshape(b, n, h, d) * torch.as_tensor(self.head_mask)).sum(dim=2)
        xq = xq + self.out(mixed)
        return xq + self.ff(self.norm_ff(xq))

    def local(
        self, xq: torch.Tensor, xk: torch.Tensor, qpos: torch.Tensor, keep: Any, window: int
    ) -> torch.Tensor:
        """As :meth:`forward`, but each query reads only the keys within ``window`` tokens of it:
        the cost grows with the text's length, not with length x numbers."""
        b, n, d = xq.shape
        h, w = self.heads, 2 * window + 1
        q = self.q(self.norm_q(xq)).reshape(b, n, h, d // h)
        k, v = self.kv(self.norm_k(xk)).chunk(2, dim=-1)
        index = (qpos[..., None] + torch.arange(w, device=qpos.device)).reshape(b, n * w)

        def near(t: torch.Tensor) -> torch.Tensor:
            padded = nn.functional.pad(t, (0, 0, window, window))
            return torch.gather(padded, 1, index[..., None].expand(-1, -1, d)).reshape(
                b, n, w, h, d // h
            )

        seen = torch.gather(nn.functional.pad(keep, (window, window), value=False), 1, index)
        offsets = torch.arange(-window, window + 1).clamp(-self.rel, self.rel) + self.rel
        scores = torch.einsum("bnhe,bnwhe->bnhw", q, near(k)) / math.sqrt(d // h)
        scores = scores + self.bias[:, offsets]
        scores = scores.masked_fill(~seen.reshape(b, n, 1, w), float("-inf")).softmax(dim=-1)
        mixed = torch.einsum("bnhw,bnwhe->bnhe", scores, near(v)).reshape(b, n, d)
        xq = xq + self.out(mixed)
        return xq + self.ff(self.norm_ff(xq))


class TextQNet(nn.Module):
    """Q for each action from token ids and values (N, L): see the module docstring.

    ``elements`` = the ids of "[" and "]": actions are element ids, scored one by one. Q is
    ``scale`` x the head's output (as in :class:`~governor.safety_values.encoders.StateQNet`). With a
    ``window``, the number tokens of layer 1 read the text within that many tokens of them (the
    words that say what a number is) instead of the whole text.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 16,
        heads: int = 1,
        ff: int = 32,
        pool: int = 4,
        head_hidden: int = 128,
        rel: int = 12,
        max_len: int = 512,
        actions: int = 3,
        elements: tuple[int, int] | None = None,
        scale: float = 1.0,
        window: int | None = None,
    ) -> None:
        super().__init__()
        self.scale, self.window = scale, window
        if d_model % heads:
            raise ConfigError(f"d_model: {expected(f'a multiple of heads={heads}', d_model)}")
        self.actions, self.elements = actions, elements
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model) if max_len else None
        self.read = _Block(d_model, heads, ff, rel, norm_keys=False)
        self.mix = _Block(d_model, heads, ff, rel)
        self.pool_queries = nn.Parameter(torch.randn(pool, d_model) / math.sqrt(d_model))
        width = pool * d_model
        if elements is not None:
            self.absent = nn.Parameter(torch.zeros(d_model))
            width += d_model
        self.head = nn.Sequential(
            nn.Linear(width, head_hidden),
            nn.Tanh(),
            nn.Linear(head_hidden, head_hidden),
            nn.Tanh(),
            nn.Linear(head_hidden, 1 if elements is not None else actions),
        )

    def forward(self, ids: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        b, length = ids.shape
        if self.pos is None:
            x = self.embed(ids) * values[..., None]
        else:
            top = self.pos.num_embeddings - 1
            positions = torch.arange(length, device=ids.device).clamp(max=top)
            x = torch.addcmul(self.pos(positions), self.embed(ids), values[..., None])
        is_num = ids == NUM_ID
        count = int(is_num.sum(dim=1).max()) if b else 0
        if count == 0:  # nothing to read: Q from the pooling queries alone
            pooled = self.pool_queries.reshape(1, -1).expand(b, -1)
            if self.elements is None:
                return self.head(pooled) * self.scale
            return self._score(pooled, self.absent.expand(b, self.actions, -1))
        # positions of the number tokens, in text order, padded by the last position
        order = torch.argsort((~is_num).to(torch.int8), dim=1, stable=True)[:, :count]
        num_keep = torch.gather(is_num, 1, order)
        xq = torch.gather(x, 1, order[..., None].expand(-1, -1, x.shape[2]))
        if self.window is None:
            xq = self.read(xq, x, order, ids != PAD_ID)
        else:
            xq = self.read.local(xq, x, order, ids != PAD_ID, self.window)
        # the number tokens among themselves: positions of number i are order[:, i]
        xq = self.mix(xq, xq, torch.arange(count).expand(b, -1), num_keep)
        scores = torch.einsum("pd,bnd->bpn", self.pool_queries, xq) / math.sqrt(xq.shape[2])
        weights = scores.masked_fill(~num_keep[:, None, :], float("-inf")).softmax(dim=-1)
        pooled = torch.einsum("bpn,bnd->bpd", weights, xq).flatten(1)
        if self.elements is None:
            return self.head(pooled) * self.scale
        return self._score(pooled, self._element_slots(ids, values, order, num_keep, xq))

    def _element_slots(
        self,
        ids: torch.Tensor,
        values: torch.Tensor,
        order: torch.Tensor,
        keep: torch.Tensor,
        xq: torch.Tensor,
    ) -> torch.Tensor:
        """(b, actions, d): the number token inside "[a]" for each action a, else ``absent``."""
        assert self.elements is not None
        b, a, d = ids.shape[0], self.actions, xq.shape[2]
        opening, closing = self.elements
        before = nn.functional.pad(ids[:, :-1], (1, 0), value=PAD_ID)
        after = nn.functional.pad(ids[:, 1:], (0, 1), value=PAD_ID)
        bracketed = torch.gather((before == opening) & (after == closing), 1, order) & keep
        which = torch.round(torch.gather(values, 1, order) * NUMBER_SCALE).long()
        bracketed &= (which >= 0) & (which < a)
        which = torch.where(bracketed, which, torch.full_like(which, a))  # a: discarded
        slots = torch.cat([self.absent.expand(b, a, d), xq.new_zeros(b, 1, d)], dim=1)
        return slots.scatter(1, which[..., None].expand(-1, -1, d), xq)[:, :a]

    def _score(self, pooled: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        """Q (b, actions) from the pooled text and each action's element (b, actions, d)."""
        rows = torch.cat([pooled[:, None, :].expand(-1, slots.shape[1], -1), slots], dim=2)
        return self.head(rows).squeeze(-1) * self.scale
