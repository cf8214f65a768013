"""A backend for a Hugging Face causal language model stored in a local folder.

torch and transformers are imported lazily (the ``[hf]`` extra), and only local files are read:
nothing is ever downloaded. Besides chat and embeddings it exposes the next-token logits and the
hidden states, for value-guided decoding and safety values on an LLM backbone. Those are model
calls too, and are counted like chat calls. The module's functions (model folder and dtype
checks, the ``from_pretrained`` dtype keyword, the chat prompt) are shared with
:mod:`~governor.safety_values.llm_q`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from governor.backends.base import (
    Backend,
    ChatRequest,
    ChatResult,
    Completion,
    Message,
    TokenLogprob,
)
from governor.backends.hf_prefix import PrefixCache
from governor.errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ConfigError,
    expected,
)
from governor.usage import Usage, record_llm_call

DTYPES = ("float32", "float16", "bfloat16")


class HFBackend(Backend):
    """A causal LM and its tokenizer loaded from ``model_path`` (a folder, never a hub name).

    ``dtype`` None keeps the dtype the weights were saved in. ``num_threads`` sets torch's
    process-wide CPU thread count (1 is fastest for tiny models); None leaves it alone.
    Sampling uses exactly the requested temperature, with no hidden top-k or top-p. Generation
    ends at an end token of the folder's generation config, at ``max_tokens``, or at a stop
    sequence of the request (the text is cut before it). ``name`` replaces ``hf:<folder>``.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        num_threads: int | None = None,
        name: str | None = None,
    ):
        path = Path(model_path).expanduser()
        check_model_folder(path)
        check_dtype(dtype)
        if num_threads is not None and (isinstance(num_threads, bool) or num_threads < 1):
            raise ConfigError(f"num_threads: {expected('an integer >= 1 or None', num_threads)}")
        torch, transformers = _import_hf()
        try:
            self.device = torch.device(device)
        except RuntimeError as exc:
            raise ConfigError(
                f"device: {expected('a torch device such as cpu or cuda:0', device)}"
            ) from exc
        if num_threads is not None:
            torch.set_num_threads(num_threads)
        self._torch = torch
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                path, local_files_only=True, **dtype_kwargs(torch, transformers, dtype)
            )
            self.model = model.to(self.device).eval()
        except Exception as exc:  # transformers and torch raise many kinds; all mean the same here
            raise BackendUnavailable(
                f"cannot load a model from {path}: {type(exc).__name__}: {exc}"
            ) from exc
        self._prefix = PrefixCache(self.model)
        self.tokenizer.padding_side = "right"  # embeddings pool over the leading tokens
        self.path = path
        self.name = name or f"hf:{path.name}"
        eos = self.model.generation_config.eos_token_id
        eos = self.tokenizer.eos_token_id if eos is None else eos
        self._eos: set[int] = set(eos) if isinstance(eos, list) else {eos} - {None}
        pad = self.tokenizer.pad_token_id
        self._pad: int | None = pad if pad is not None else next(iter(self._eos), None)

    def __repr__(self) -> str:
        return f"HFBackend({str(self.path)!r}, device={str(self.device)!r})"

    # ------------------------------------------------------------------ the Backend interface

    def _chat(self, request: ChatRequest) -> ChatResult:
        return self.generate(request)

    def generate(
        self,
        request: ChatRequest,
        *,
        cancelled: Callable[[], bool] | None = None,
        streamer: Any = None,
        max_prompt_tokens: int | None = None,
    ) -> ChatResult:
        """The completions of ``request``, not counted (:meth:`chat` counts them).

        ``cancelled`` is asked after each generated token: once it says true, generation stops
        and a :class:`~governor.errors.BackendTimeout` is raised (the prompt's own forward pass
        cannot be interrupted). ``streamer`` is transformers' (``put`` and ``end``), for ``n`` 1.
        A prompt longer than ``max_prompt_tokens`` is refused (a BackendError) before any pass.
        """
        from transformers import GenerationConfig

        torch = self._torch
        prompt = self._encode(request.messages)
        length = prompt["input_ids"].shape[1]
        if max_prompt_tokens is not None and length > max_prompt_tokens:
            wanted = f"a prompt of at most {max_prompt_tokens} tokens"
            raise BackendError(f"{self.name}: {expected(wanted, f'{length} tokens')}")
        sampling = request.temperature > 0
        config = GenerationConfig(
            max_new_tokens=request.max_tokens,
            do_sample=sampling,
            num_return_sequences=request.n
            if sampling
            else 1,  # greedy decoding: one answer, repeated
            pad_token_id=self._pad,
            eos_token_id=sorted(self._eos) or None,
            return_dict_in_generate=True,
            output_logits=request.logprobs,
            # the model's own sampling defaults are overridden; top_k=50 is the neutral default
            temperature=request.temperature if sampling else 1.0,
            top_k=0 if sampling else 50,
            top_p=1.0,
            repetition_penalty=1.0,
        )
        start = prompt["input_ids"].shape[1]
        stops = [s for s in request.stop if s]
        criteria = [_stop_criterion(self.tokenizer, stops, start)] if stops else []
        cancel = None if cancelled is None else _cancel_criterion(cancelled)
        with torch.inference_mode():
            out = self.model.generate(
                **prompt,
                generation_config=config,
                stopping_criteria=[*criteria, *([cancel] if cancel else [])] or None,
                streamer=streamer,
            )
        if cancel is not None and cancel.fired:
            made = out.sequences.shape[1] - start
            raise BackendTimeout(f"{self.name}: generation cancelled after {made} token(s)")
        logp = torch.log_softmax(torch.stack(out.logits).float(), -1) if request.logprobs else None
        completions, generated = [], 0
        for row, sequence in enumerate(out.sequences.tolist()):
            ids = sequence[start:]
            ended = next((i + 1 for i, t in enumerate(ids) if t in self._eos), None)
            ids = ids[:ended]
            generated += len(ids)
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            cut = min(
                (i for i in (text.find(s) for s in request.stop if s) if i >= 0), default=None
            )
            tokens = None
            if logp is not None:
                kept = len(ids) if cut is None else self._tokens_before(ids, cut)
                tokens = self._token_logprobs(ids[:kept], logp[:, row], request.top_logprobs)
            reason = "stop" if cut is not None or ended else "length"
            completions.append(Completion(text if cut is None else text[:cut], reason, tokens))
        if not sampling:
            completions *= request.n
        usage = Usage(calls=1, prompt_tokens=start, completion_tokens=generated)
        return ChatResult(tuple(completions), usage, self.name)

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, Usage]:
        """Mean of the last hidden layer over each text's tokens (padding excluded)."""
        torch = self._torch
        padded = self.tokenizer.pad_token_id is not None
        rows, tokens = [], 0
        for batch in [texts] if padded else [[t] for t in texts]:
            enc = self.tokenizer(batch, return_tensors="pt", padding=padded).to(self.device)
            if enc["input_ids"].shape[1] == 0:
                raise ConfigError(f"{self.name}: {expected('texts of at least one token', batch)}")
            with torch.inference_mode():
                hidden = self.model(**enc, output_hidden_states=True).hidden_states[-1].float()
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            rows.append((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))
            tokens += int(enc["attention_mask"].sum())
        vectors = torch.cat(rows).cpu().numpy().astype(np.float32)
        return vectors, Usage(calls=1, prompt_tokens=tokens)

    # ------------------------------------------------------------------ logits and hidden states

    def next_token_logits(self, messages_or_text: str | Sequence[Message]) -> np.ndarray:
        """Logits of the next token, float32, shape [vocab]. Counted as one LLM call.

        A string is used verbatim as the prompt; messages are formatted like a chat request.
        A prompt prefix shared with recent prompts is not run again (:mod:`.hf_prefix`).
        A failure is a counted, failed call and a BackendError.
        """
        if isinstance(messages_or_text, str):
            enc = self._tokens(messages_or_text, special=True)
        else:
            enc = self._encode(tuple(messages_or_text))
        logits, _ = self._counted(lambda: self._forward(enc, hidden=False, last=True))
        return logits[0].float().cpu().numpy().astype(np.float32)

    def hidden_states(self, text: str) -> np.ndarray:
        """Last-layer hidden states of ``text``, float32, shape [seq, hidden]. One LLM call."""
        hidden = self._forward(self._tokens(text, special=True), hidden=True)
        return hidden[0].float().cpu().numpy().astype(np.float32)

    # ------------------------------------------------------------------ helpers

    def _forward(self, enc: Any, *, hidden: bool, last: bool = False) -> Any:
        """The last hidden layer, the logits, or (``last``) the last position's logits."""
        start = time.perf_counter()
        with self._torch.inference_mode():
            if last:
                result = self._prefix.last_logits(enc["input_ids"])
            else:
                out = self.model(**enc, output_hidden_states=hidden)
                result = out.hidden_states[-1] if hidden else out.logits
        seconds = time.perf_counter() - start
        record_llm_call(Usage(calls=1, prompt_tokens=enc["input_ids"].shape[1], seconds=seconds))
        return result

    def _encode(self, messages: tuple[Message, ...]) -> Any:
        """The prompt's tokens (:func:`chat_prompt`)."""
        text, special = chat_prompt(self.tokenizer, messages)
        return self._tokens(text, special=special)

    def _tokens(self, text: str, *, special: bool) -> Any:
        enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=special)
        if enc["input_ids"].shape[1] == 0:
            raise ConfigError(f"{self.name}: {expected('a prompt of at least one token', text)}")
        return enc.to(self.device)

    def _tokens_before(self, ids: list[int], cut: int) -> int:
        """How many leading tokens contribute text before character ``cut`` of the decoding."""
        kept = 0
        while (
            kept < len(ids)
            and len(self.tokenizer.decode(ids[:kept], skip_special_tokens=True)) < cut
        ):
            kept += 1
        return kept

    def _token_logprobs(self, ids: list[int], logp: Any, top: int) -> tuple[TokenLogprob, ...]:
        """TokenLogprob per generated token from log-softmaxed raw logits ([steps, vocab])."""
        result = []
        for step, token in enumerate(ids):
            alternatives: tuple[tuple[str, float], ...] = ()
            if top:
                values, indices = logp[step].topk(top)
                alternatives = tuple(
                    (self.tokenizer.decode([i]), float(v))
                    for v, i in zip(values.tolist(), indices.tolist(), strict=True)
                )
            result.append(
                TokenLogprob(self.tokenizer.decode([token]), float(logp[step, token]), alternatives)
            )
        return tuple(result)


def _stop_criterion(tokenizer: Any, stops: list[str], start: int) -> Any:
    """Ends a row of a batch once its generated text holds one of ``stops`` (the generated part
    is decoded each step: cheap next to a forward pass at these lengths, and unlike
    transformers' ``stop_strings`` it needs no pass over the whole vocabulary per call)."""
    import torch
    from transformers import StoppingCriteria

    class StopOnText(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            rows = input_ids[:, start:].tolist()
            texts = [tokenizer.decode(row, skip_special_tokens=True) for row in rows]
            done = [any(s in text for s in stops) for text in texts]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StopOnText()


def _cancel_criterion(cancelled: Callable[[], bool]) -> Any:
    """Ends every row of a batch once ``cancelled()`` says true; ``fired`` says whether it did."""
    import torch
    from transformers import StoppingCriteria

    class Cancelled(StoppingCriteria):
        fired = False

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            self.fired = self.fired or bool(cancelled())
            return torch.full(
                (input_ids.shape[0],), self.fired, dtype=torch.bool, device=input_ids.device
            )

    return Cancelled()


def chat_prompt(tokenizer: Any, messages: Sequence[Message], **template: Any) -> tuple[str, bool]:
    """The prompt text of ``messages`` and whether the tokenizer adds its special tokens to it.

    The tokenizer's chat template (``template``: extra variables for it) when it has one, else a
    plain ``role: content`` transcript ending in ``assistant:``.
    """
    if getattr(tokenizer, "chat_template", None):
        turns = [{"role": m.role, "content": m.content} for m in messages]
        text = tokenizer.apply_chat_template(
            turns, add_generation_prompt=True, tokenize=False, **template
        )
        return text, False
    lines = [f"{m.role}: {m.content}" for m in messages]
    return "\n".join([*lines, "assistant:"]), True


def check_model_folder(path: Path) -> None:
    """Raise BackendUnavailable unless ``path`` holds config.json and a weights file."""
    if not path.exists():
        found = "nothing at that path"
    elif not path.is_dir():
        found = "a file"
    elif not (path / "config.json").is_file():
        found = "a folder without config.json"
    elif not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        found = "a folder with config.json but no *.safetensors or *.bin weights"
    else:
        return
    raise BackendUnavailable(
        f"{path}: expected a folder with config.json and weights (*.safetensors or *.bin), "
        f"found {found}"
    )


def check_dtype(dtype: str | None) -> None:
    """Raise a ConfigError unless ``dtype`` is None (the saved dtype) or one of :data:`DTYPES`."""
    if dtype is not None and dtype not in DTYPES:
        raise ConfigError(f"dtype: {expected(' or '.join(DTYPES), dtype)}")


def transformers_at_least(transformers: Any, major: int, minor: int) -> bool:
    """Whether the installed transformers is version ``major.minor`` or newer."""
    found = tuple(int(part) for part in transformers.__version__.split(".")[:2])
    return found >= (major, minor)


def dtype_arg(transformers: Any) -> str:
    """``dtype`` since transformers 4.56; ``torch_dtype`` before."""
    return "dtype" if transformers_at_least(transformers, 4, 56) else "torch_dtype"


def dtype_kwargs(torch: Any, transformers: Any, dtype: str | None) -> dict[str, Any]:
    """The ``from_pretrained`` keyword for ``dtype`` (None: "auto", the saved dtype)."""
    return {dtype_arg(transformers): getattr(torch, dtype) if dtype else "auto"}


def _import_hf() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"the Hugging Face backend needs torch and transformers ({exc.name} is missing); "
            "install them with: pip install -e '.[hf]' in the governor checkout"
        ) from exc
    transformers.utils.logging.disable_progress_bar()  # no third-party bar in our output
    return torch, transformers
