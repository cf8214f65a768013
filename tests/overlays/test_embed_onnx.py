"""The ONNX Runtime path of the local encoder: same vectors as torch, a cache that is reused and
checked, and the choice of runtime."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from governor.errors import ConfigError
from governor.overlays.embed import minilm as embed_module
from governor.overlays.embed import onnx_graph as embed_onnx
from governor.overlays.embed import runtime as embed_runtime

TEXTS = [
    "I love hiking in the mountains.",
    "Walking up hills is my favourite thing to do at the weekend, what about you?",
    "Tax forms.",
    "ok",
]

needs_onnx = pytest.mark.skipif(
    not (embed_module.embed_available() and embed_onnx.onnx_available()),
    reason="the [embed] extra with onnxruntime and onnx is not installed",
)


def test_a_cached_file_is_built_once_and_rebuilt_when_broken(tmp_path: Path) -> None:
    built: list[Path] = []

    def build(out: Path) -> None:
        built.append(out)
        out.write_bytes(b"graph %d" % len(built))

    path = tmp_path / "cache" / "model.onnx"
    assert embed_onnx.cached(path, build) == path and path.read_bytes() == b"graph 1"
    assert embed_onnx.cached(path, build) == path and len(built) == 1  # reused
    assert built[0] != path  # written elsewhere, then renamed into place
    path.write_bytes(b"graph 1, torn")
    assert not embed_onnx.trusted(path)
    embed_onnx.cached(path, build)
    assert len(built) == 2 and path.read_bytes() == b"graph 2" and embed_onnx.trusted(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.onnx", "model.onnx.sha256"]


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    def build(out: Path) -> None:
        out.write_bytes(b"half")
        raise RuntimeError("exporter crashed")

    path = tmp_path / "model.onnx"
    with pytest.raises(RuntimeError, match="exporter crashed"):
        embed_onnx.cached(path, build)
    assert list(tmp_path.iterdir()) == []


def test_local_embed_prefers_onnx_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed_module, "onnx_embed", lambda quantised: f"onnx {quantised}")
    monkeypatch.setattr(embed_module, "torch_embed", lambda: "torch")
    monkeypatch.setattr(embed_onnx, "onnx_available", lambda: True)
    monkeypatch.delenv("GOVERNOR_EMBED_RUNTIME", raising=False)
    assert embed_runtime.local_embed() == "onnx False"
    monkeypatch.setenv("GOVERNOR_EMBED_RUNTIME", "onnx-int8")
    assert embed_runtime.local_embed() == "onnx True"
    monkeypatch.setenv("GOVERNOR_EMBED_RUNTIME", "torch")
    assert embed_runtime.local_embed() == "torch"
    monkeypatch.setenv("GOVERNOR_EMBED_RUNTIME", "tensorflow")
    with pytest.raises(
        ConfigError, match="expected one of onnx, onnx-int8, torch, static-learned, found 'tens"
    ):
        embed_runtime.local_embed()
    monkeypatch.delenv("GOVERNOR_EMBED_RUNTIME")
    monkeypatch.setattr(embed_onnx, "onnx_available", lambda: False)
    assert embed_runtime.local_embed() == "torch"


def test_texts_are_batched_with_others_of_similar_length() -> None:
    sizes = [3, 3, 4, 4, 5, 9, 10, 30, 31, 31]
    items = [(list(range(n)), f"text {i}") for i, n in enumerate(sizes)]
    batches = embed_module._similar_lengths(items, batch_size=3, slack=0.25)
    assert [t for b in batches for _, t in b] == [t for _, t in items]  # all, in order
    assert [[len(ids) for ids, _ in b] for b in batches] == [
        [3, 3, 4],
        [4, 5],
        [9, 10],
        [30, 31, 31],
    ]
    for batch in batches:  # padding to the longest stays within the slack
        held = sum(len(ids) for ids, _ in batch)
        assert len(batch) * max(len(ids) for ids, _ in batch) - held <= 0.25 * held
    assert len(embed_module._similar_lengths(items, batch_size=1)) == len(items)


@pytest.fixture(scope="module")
def cache() -> Iterator[Path]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
        mp.setenv("GOVERNOR_CACHE_DIR", folder)
        yield Path(folder)


@pytest.fixture(scope="module")
def model_path() -> Path:
    return embed_module._model_path()


@pytest.mark.embed
@needs_onnx
def test_onnx_vectors_match_torch(cache: Path, model_path: Path) -> None:
    fast = embed_module.OnnxEmbed(model_path)
    assert fast.exported and len(list(cache.glob("minilm-*.onnx"))) == 1
    reference = embed_module.torch_embed()
    a, b = fast(TEXTS), reference(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert np.min(np.sum(a * b, axis=1)) >= 0.999
    for text in TEXTS:
        ta, tb = fast.tokens(text), reference.tokens(text)
        assert ta.shape == tb.shape
        assert np.min(np.sum(ta * tb, axis=1)) >= 0.999
    batched = embed_module.OnnxEmbed(model_path)
    batched.prefetch(TEXTS)  # one padded batch gives the same vectors as one text at a time
    assert np.min(np.sum(batched(TEXTS) * a, axis=1)) >= 0.999


@pytest.mark.embed
@needs_onnx
def test_the_cached_graph_is_reused_and_a_broken_one_rebuilt(
    cache: Path, model_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = embed_module.OnnxEmbed(model_path)
    (graph,) = cache.glob("minilm-*.onnx")

    def no_export(*_: object) -> None:
        raise AssertionError("exported again although the cache was valid")

    with monkeypatch.context() as mp:
        mp.setattr(embed_onnx, "export", no_export)
        second = embed_module.OnnxEmbed(model_path)
    assert not second.exported
    with open(graph, "r+b") as f:
        f.seek(graph.stat().st_size // 2)
        f.write(b"\x00\x01\x02\x03")
    third = embed_module.OnnxEmbed(model_path)
    assert third.exported and embed_onnx.trusted(graph)
    assert np.min(np.sum(third(TEXTS) * first(TEXTS), axis=1)) >= 0.999
