"""LLM backends: OpenAI-compatible HTTP, local Hugging Face transformers, and scripted replies."""

from governor.backends.base import Backend, ChatResult, Completion, Message, TokenLogprob
from governor.backends.scripted import ScriptedBackend

__all__ = ["Backend", "ChatResult", "Completion", "Message", "ScriptedBackend", "TokenLogprob"]
