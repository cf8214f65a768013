"""The conversation config file (YAML or JSON) of `governor chat` and `governor audit`.

Sections, all optional::

    overlays: path/to/overlays.yaml    # default: the shipped small-talk set
    policy:                            # the base policy
      kind: llm                        # llm (a configured endpoint) or retrieval (offline)
      system_prompt: ...
      temperature: 0.7
      max_tokens: 60
      examples: 4                # human example exchanges shown to the chat model (0: none)
      data: data/conversations   # the corpora folder (retrieval, and the examples)
      seed: 0
    observer: {n_candidates: 1, max_regenerations: 3, leniency: 0.3, mild: 2.0, seed: 0,
               feedback: template, time_budget_s: 30, stop_on_repeat: true}
    backend: {base_url: ..., model: ..., api_key: ..., timeout_s: 60, max_retries: 2}
    observer_backend: {...}            # the observer model (feedback: llm); default: backend

Backend settings not given come from GOVERNOR_BASE_URL, GOVERNOR_MODEL and GOVERNOR_API_KEY.
Unknown keys and bad values are errors naming the file, the section and the key.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from governor.backends import Backend, backend_from_config
from governor.config import BackendConfig, check_range, from_mapping, option
from governor.conversation.examples import human_examples
from governor.conversation.llm_policy import SYSTEM_PROMPT, LLMChatPolicy
from governor.conversation.small_talk import SmallTalkConfig, small_talk_observer
from governor.core import Policy
from governor.data import shared_data_dir
from governor.errors import ConfigError, expected
from governor.files import load_mapping
from governor.observer import Observer
from governor.overlays.loader import DEFAULT_OVERLAYS, load_overlays
from governor.overlays.rules import Overlay
from governor.worlds.smalltalk.responder import RetrievalResponder

SECTIONS = ("overlays", "policy", "observer", "backend", "observer_backend")
MakeBackend = Callable[[BackendConfig], Backend]


def conversations_dir() -> Path:
    """The corpora: ``$GOVERNOR_CONVERSATIONS``, else ``conversations/`` in the shared data."""
    env = os.environ.get("GOVERNOR_CONVERSATIONS")
    if env:
        return Path(env).expanduser()
    return shared_data_dir() / "conversations"


@dataclasses.dataclass(frozen=True)
class PolicySettings:
    """Which base policy answers, and how."""

    kind: Literal["llm", "retrieval"] = option("llm", "llm (an endpoint) or retrieval (offline)")
    system_prompt: str = option(SYSTEM_PROMPT, "the chat model's system prompt")
    temperature: float = option(0.7, "the chat model's sampling temperature")
    max_tokens: int = option(60, "the longest reply the chat model may write, in tokens")
    examples: int = option(
        4,
        "human example exchanges (calibration split) shown to the chat model in its system"
        " prompt, so that a base model answers as a chat partner (0: none)",
    )
    data: str | None = option(None, "the corpora folder: retrieval, examples (default: shared)")
    seed: int = option(0, "retrieval: tie-break seed; which example exchanges are shown")

    def __post_init__(self) -> None:
        if self.kind not in ("llm", "retrieval"):
            raise ConfigError(f"kind: {expected('llm or retrieval', self.kind)}")
        if not isinstance(self.system_prompt, str) or not self.system_prompt.strip():
            raise ConfigError(f"system_prompt: {expected('text', self.system_prompt)}")
        check_range("temperature", self.temperature, 0.0, 5.0)
        check_range("max_tokens", self.max_tokens, 1, 100_000)
        check_range("examples", self.examples, 0, 32)


@dataclasses.dataclass(frozen=True)
class ConversationSettings:
    """A validated config file."""

    overlays: tuple[Overlay, ...]
    policy: PolicySettings
    observer: SmallTalkConfig
    backend: BackendConfig
    observer_backend: BackendConfig

    def make_policy(self, make_backend: MakeBackend = backend_from_config) -> Policy:
        """The base policy (an endpoint's chat model, or the offline retrieval responder)."""
        p = self.policy
        data = Path(p.data) if p.data else conversations_dir()
        if p.kind == "retrieval":
            return RetrievalResponder.from_corpora(data, seed=p.seed)
        examples = human_examples(data, p.examples, seed=p.seed) if p.examples else ()
        return LLMChatPolicy(
            make_backend(self.backend),
            system_prompt=p.system_prompt,
            temperature=p.temperature,
            max_tokens=p.max_tokens,
            examples=examples,
        )

    def make_observer(
        self, make_backend: MakeBackend = backend_from_config, policy: Policy | None = None
    ) -> Observer:
        """The small-talk observer around the configured (or the given) policy."""
        judge = make_backend(self.observer_backend) if self.observer.feedback == "llm" else None
        return small_talk_observer(
            policy or self.make_policy(make_backend),
            self.overlays,
            config=self.observer,
            observer_backend=judge,
        )


def load_settings(
    path: str | Path | None, environ: Mapping[str, str] | None = None
) -> ConversationSettings:
    """Read and validate a config file; ``None`` gives the defaults."""
    data = load_mapping(path) if path is not None else {}
    where = str(path or "defaults")
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown section(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(SECTIONS)}"
        )
    overlay_path = data.get("overlays") or DEFAULT_OVERLAYS
    if not isinstance(overlay_path, (str, Path)):
        raise ConfigError(f"{where}: overlays: {expected('a file path', overlay_path)}")
    if path is not None and not Path(overlay_path).is_absolute():
        overlay_path = Path(path).parent / overlay_path
    backend = _backend(data, "backend", where, environ)
    judge = (
        _backend(data, "observer_backend", where, environ)
        if "observer_backend" in data
        else backend
    )
    return ConversationSettings(
        tuple(load_overlays(overlay_path)),
        _section(PolicySettings, data, "policy", where),
        _section(SmallTalkConfig, data, "observer", where),
        backend,
        judge,
    )


def _section(cls: type[Any], data: Mapping[str, Any], key: str, where: str) -> Any:
    section = data.get(key) or {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"{where}: {key}: {expected('a mapping', type(section).__name__)}")
    try:
        return from_mapping(cls, section, where=f"{where}: {key}")
    except ConfigError as exc:
        message = str(exc)
        raise ConfigError(
            message if message.startswith(where) else f"{where}: {key}: {message}"
        ) from exc


def _backend(
    data: Mapping[str, Any], key: str, where: str, environ: Mapping[str, str] | None
) -> BackendConfig:
    section = data.get(key) or {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"{where}: {key}: {expected('a mapping', type(section).__name__)}")
    names = {f.name for f in dataclasses.fields(BackendConfig)}
    unknown = sorted(set(section) - names)
    if unknown:
        raise ConfigError(
            f"{where}: {key}: unknown key(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(names))}"
        )
    try:
        return BackendConfig.from_env(environ, **section)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from exc
