"""A tiny randomly initialised Llama model and its word-level tokenizer, saved into a folder (the
tests of the transformers backend and of the local model's worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

WORDS = "the a cat dog bird sat ran flew on under mat tree house red blue big small yes no"
SPECIAL = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
VOCAB = [*SPECIAL, "user", "assistant", "system", ":", ".", ",", "?", *WORDS.split()]
EOS = 3


def save_tiny_llama(path: Path) -> Path:
    """A word-level tokenizer and a 1-layer Llama with random weights (seed 0) saved in ``path``;
    skips the test where torch, transformers or tokenizers is missing."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    word_level = tokenizers.models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]")
    raw = tokenizers.Tokenizer(word_level)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="[PAD]",
        unk_token="[UNK]",
        bos_token="[BOS]",
        eos_token="[EOS]",
    )
    config = transformers.LlamaConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=EOS,
    )
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
