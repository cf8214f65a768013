"""LLM backends: OpenAI-compatible HTTP, local Hugging Face transformers (the fetched local model
among them, :mod:`.local_model`; behind a service, on a generation thread of its own cut at the
caller's deadline, :mod:`.local_worker`), and scripted replies.

Every backend records each call it makes (:mod:`governor.usage`), so no LLM call is hidden.
Imports the core types, the config and the error tree; nothing of the loop or the families.
"""

from governor.backends.base import Backend, ChatResult, Completion, Message, TokenLogprob
from governor.backends.hf import HFBackend
from governor.backends.openai import OpenAIBackend
from governor.backends.scripted import ScriptedBackend
from governor.config import BackendConfig
from governor.errors import ConfigError


def backend_from_config(config: BackendConfig) -> Backend:
    """The in-process backend on ``config.model_path`` when set, else the OpenAI-compatible one;
    a ConfigError when neither is set."""
    if config.model_path is not None:
        from governor.backends.local_model import local_backend

        return local_backend(config.model_path)
    if config.base_url is None or config.model is None:
        raise ConfigError(
            "no LLM endpoint configured; set GOVERNOR_BASE_URL and GOVERNOR_MODEL "
            "or pass --base-url and --model, or --model-path"
        )
    return OpenAIBackend(config)


__all__ = [
    "Backend",
    "ChatResult",
    "Completion",
    "HFBackend",
    "Message",
    "OpenAIBackend",
    "ScriptedBackend",
    "TokenLogprob",
    "backend_from_config",
]
