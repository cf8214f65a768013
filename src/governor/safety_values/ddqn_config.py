"""The settings of reach-avoid DDQN and its schedules (no torch needed to read them).

Schedules are the paper's (start, decay, period, end): max(end, start * decay ** (step // period)),
with ``step`` counted in iterations (one gradient step each). The discount anneals the same way on
1 - gamma (halved every ``gamma_period`` until ``gamma_end``).

The env is the name of a registered task (:func:`~governor.safety_values.tasks.register_task`;
whoever builds a config imports the world's task module first, e.g.
:mod:`governor.worlds.driving.task`). Some settings depend on the env: each task registers its
defaults for them (:class:`~governor.safety_values.tasks.DDQNDefaults`; driving follows the
paper's Table 6, commerce its Table 9 where it applies: the reasons are beside each task), and a
field left at None takes its env's. :func:`env_defaults_text` lists them for the command's help.
:func:`single_thread` imports torch when called (a ConfigError naming the ``learn`` extra when it
is missing) and sets it to one thread, as training, evaluation and the ReGuard tables run.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.safety_values.tasks import DDQNDefaults, registered_tasks, task_named

OBS_KINDS = ("state", "text", "llm", "llm-head")
LLM_OBS = ("llm", "llm-head")  # observation models that read a causal LM (--model-path)
PER_ENV = tuple(f.name for f in dataclasses.fields(DDQNDefaults) if f.name != "text_batch")


def _per_env(help: str) -> Any:
    """A field whose default depends on the env: None until construction fills it in."""
    return option(None, f"{help} (None: the env's, listed below)")


def env_defaults_text() -> str:
    """The per-env defaults of the registered tasks as a table (for the command's help)."""
    header = ["env", *(f.replace("_", "-") for f in PER_ENV), "text-batch"]
    rows = [header]
    for name in registered_tasks():
        defaults = task_named(name).ddqn_defaults
        values = [f"{getattr(defaults, f):g}" for f in (*PER_ENV, "text_batch")]
        rows.append([name, *values])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    return "defaults per env (a flag left out takes its env's):\n" + "\n".join(
        "  " + line.rstrip() for line in lines
    )


@dataclasses.dataclass(frozen=True)
class DDQNConfig:
    """`governor train safety-value`: reach-avoid DDQN (defaults: the paper's Table 6 / Table 9).

    A field left at None takes its env's default (the ``DDQNDefaults`` its task registered) when
    the config is built, so a built config always holds numbers; ``dataclasses.replace`` keeps
    them, so to switch env build a new config.
    """

    env: str = option("driving", "environment: a registered task (listed below)")
    obs: Literal["state", "text", "llm", "llm-head"] = option(
        "state",
        "what Q reads: the state, the text, an LLM's own logits (LoRA), or a small head on the "
        "LLM's frozen hidden states (llm-head); the last two need --model-path",
    )
    model_path: str | None = option(
        None,
        "obs llm, llm-head: a local causal LM folder or gemma3-270m (LoRA settings: the paper's "
        "Table 5)",
    )
    minutes: float = option(15.0, "wall-clock training budget in minutes")
    iterations: int = _per_env("gradient steps at most")
    seed: int = option(0, "seed of the network, the envs and the exploration")
    n_envs: int = _per_env("envs stepped at once; each iteration adds this many transitions")
    buffer_size: int = _per_env("replay buffer capacity (transitions)")
    batch_size: int | None = option(
        None,
        "transitions per gradient step (None: 512 for state as in Table 6; text: the env's "
        "text-batch, listed below)",
    )
    learning_starts: int = option(4096, "transitions collected before the first gradient step")
    gamma: float = _per_env("discount of the safety Bellman target")
    gamma_end: float = _per_env("the discount is annealed toward this")
    gamma_period: int = option(20_000, "iterations per halving of 1 - gamma")
    tau: float = _per_env("soft update rate of the target network")
    lr: float = option(1e-3, "learning rate at the start")
    lr_decay: float = option(0.8, "learning rate factor per period")
    lr_period: int = _per_env("iterations per learning rate decay")
    lr_end: float = option(1e-4, "learning rate floor")
    eps_start: float = option(0.95, "exploration rate at the start")
    eps_decay: float = option(0.7, "exploration factor per period")
    eps_period: int = _per_env("iterations per exploration decay")
    eps_end: float = option(0.05, "exploration floor")
    adam_eps: float = option(1e-5, "AdamW epsilon")
    weight_decay: float = option(0.0, "AdamW weight decay")
    d_model: int = option(16, "text model: token embedding width")
    heads: int = option(1, "text model: attention heads")
    ff: int = option(32, "text model: feed-forward width")
    pool: int = option(4, "text model: pooling queries")
    head_hidden: int = option(128, "text and llm-head models: width of the two MLP head layers")
    llm_cars: int = option(4, "obs llm, llm-head: cars driven at once")
    llm_dtype: str | None = option(
        None, "obs llm, llm-head: model dtype, e.g. bfloat16 (None keeps the saved one)"
    )
    llm_learning_starts: int = option(64, "obs llm: token transitions before the first step")
    head_transitions: int = option(
        400, "obs llm-head: env steps whose prompts the LLM reads once (about one pass each)"
    )
    eval_every: int = option(1000, "iterations between agreement checks (progress bar)")
    eval_states: int = option(2000, "live states of the agreement check")
    checkpoint_minutes: float = option(2.0, "minutes between checkpoints")
    grid_nx: int = option(101, "exact grid value: points along the track")
    grid_ny: int = option(101, "exact grid value: points across the road")
    grid_ntheta: int = option(64, "exact grid value: headings")

    def __post_init__(self) -> None:
        defaults = task_named(self.env).ddqn_defaults
        for name in PER_ENV:
            if getattr(self, name) is None:
                object.__setattr__(self, name, getattr(defaults, name))
        if self.obs not in OBS_KINDS:
            raise ConfigError(f"obs: {expected('state, text, llm or llm-head', self.obs)}")
        if (self.obs in LLM_OBS) != (self.model_path is not None):
            raise ConfigError(
                f"model_path: expected a model folder exactly when obs is llm or llm-head, found "
                f"obs {self.obs!r} and model_path {self.model_path!r}"
            )
        if self.obs in LLM_OBS and self.env != "driving":  # the LLM backbone: driving only
            raise ConfigError(f"env: {expected(f'driving for obs {self.obs}', self.env)}")
        check_range("minutes", self.minutes, 1e-3, 1e6)  # a zero budget would save an untrained net
        for name in ("iterations", "n_envs", "buffer_size", "eval_every", "llm_cars"):
            check_range(name, getattr(self, name), 1, 1e9)
        if self.batch_size is not None:
            check_range("batch_size", self.batch_size, 1, 1e9)
        check_range("head_transitions", self.head_transitions, 1, 1e9)
        if self.llm_dtype not in (None, "float32", "bfloat16", "float16"):
            raise ConfigError(
                f"llm_dtype: {expected('float32, bfloat16 or float16', self.llm_dtype)}"
            )
        check_range("llm_learning_starts", self.llm_learning_starts, 0, 1e9)
        for name in ("gamma_period", "lr_period", "eps_period", "eval_states", "learning_starts"):
            check_range(name, getattr(self, name), 0 if name == "learning_starts" else 1, 1e9)
        check_range("gamma", self.gamma, 0.0, 1.0)
        check_range("gamma_end", self.gamma_end, self.gamma, 1.0)
        for name in ("tau", "lr_decay", "eps_start", "eps_decay", "eps_end"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        for name in ("lr", "lr_end", "adam_eps", "weight_decay", "checkpoint_minutes"):
            check_range(name, getattr(self, name), 0.0, 1e3)

    @property
    def batch(self) -> int:
        """The batch size: ``batch_size``, or the default of the observation model."""
        if self.batch_size is not None:
            return self.batch_size
        return 512 if self.obs == "state" else task_named(self.env).ddqn_defaults.text_batch

    def model_settings(self) -> dict[str, Any]:
        """The observation model's architecture settings."""
        names = ("d_model", "heads", "ff", "pool", "head_hidden")
        return {n: getattr(self, n) for n in names} if self.obs == "text" else {}


def step_schedule(start: float, decay: float, period: int, end: float, step: int) -> float:
    """max(end, start * decay ** (step // period)): the paper's (start, decay, period, end)."""
    return max(end, start * decay ** (step // period))


def gamma_at(cfg: DDQNConfig, step: int) -> float:
    """The discount at ``step``: 1 - gamma halves every ``gamma_period`` until ``gamma_end``."""
    return 1.0 - step_schedule(1.0 - cfg.gamma, 0.5, cfg.gamma_period, 1.0 - cfg.gamma_end, step)


def single_thread() -> None:
    """Import torch (the ``learn`` extra) and use one thread: faster for these small networks."""
    try:
        import torch
    except ImportError as exc:
        raise ConfigError(
            "learned safety values: expected torch (pip install -e '.[learn]' in the governor checkout), found none"
        ) from exc
    torch.set_num_threads(1)
