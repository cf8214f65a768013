"""The static table learned in context: training texts, the fit, the cache, the runtime switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from governor.errors import ConfigError
from governor.overlays.embed import minilm as embed_module
from governor.overlays.embed import runtime as embed_runtime

pytestmark = pytest.mark.embed

if not embed_module.embed_available():  # pragma: no cover - the dev install has the extra
    pytest.skip("the [embed] extra is not installed", allow_module_level=True)

from governor.overlays.corpora import CORPORA, load_dialogues, split_of  # noqa: E402
from governor.overlays.embed import learned_table as embed_learned  # noqa: E402

LIMIT = 160  # training texts of the tiny builds
STEPS = 12  # conjugate-gradient steps of the tiny builds


class _Distilled:
    """Stands in for the distilled table (which takes half a minute): the input embeddings."""

    def __init__(self) -> None:
        model = embed_module.torch_embed().model
        self.table = model.get_input_embeddings().weight.detach().numpy().copy()


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(embed_learned, "static_embed", _Distilled)
    monkeypatch.setattr(embed_learned, "ITERATIONS", STEPS)
    return tmp_path


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files :func:`embed_learned.build` writes (it still builds them)."""
    made: list[Path] = []
    real = embed_learned.build

    def counted(data_dir: Path, out: Path, **kw: Any) -> None:
        made.append(out)
        real(data_dir, out, **kw)

    monkeypatch.setattr(embed_learned, "build", counted)
    return made


@pytest.fixture()
def quick_builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files a stand-in build writes: a fixed table of the right shape (the cache's logic is
    under test, not the fit)."""
    made: list[Path] = []
    model = embed_module.torch_embed().model
    shape = (int(model.config.vocab_size), int(model.config.hidden_size))
    table = np.random.default_rng(0).standard_normal(shape).astype(np.float16)

    def write(data_dir: Path, out: Path, **kw: Any) -> None:
        made.append(out)
        with open(out, "wb") as f:
            np.save(f, table)

    monkeypatch.setattr(embed_learned, "build", write)
    return made


def test_training_texts_share_the_budget_and_avoid_heldout_dialogues(data_dir: Path) -> None:
    texts = embed_learned.training_texts(data_dir, 400)
    assert 300 <= len(texts) <= 400 and len(set(texts)) == len(texts)
    calibration: set[str] = set()
    heldout: dict[str, set[str]] = {}
    for corpus in CORPORA:
        for dialogue, _, turns, _ in load_dialogues(data_dir, corpus):
            if split_of(corpus, dialogue) == "calibration":
                calibration.update(turns)
            else:
                heldout.setdefault(corpus, set()).update(turns)
    assert set(texts) <= calibration
    only_heldout = heldout["tiage_personachat"] - calibration
    assert only_heldout and not only_heldout & set(texts)
    for corpus in CORPORA:  # every corpus contributes
        mine = {t for d, _, turns, _ in load_dialogues(data_dir, corpus) for t in turns}
        assert len(mine & set(texts)) >= 50, corpus


def test_the_key_follows_the_recipe_and_the_number_of_texts(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="expected the file"):
        embed_learned.data_key(tmp_path)  # no corpora there
    key = embed_learned.data_key(data_dir)
    assert embed_learned.data_key(data_dir, LIMIT) != key
    monkeypatch.setattr(embed_learned, "RECIPE", embed_learned.RECIPE + "-next")
    assert embed_learned.data_key(data_dir) != key


def test_a_tiny_build_gives_unit_vectors_nearer_their_own_transformer_vector(
    data_dir: Path, cache: Path, builds: list[Path]
) -> None:
    learned = embed_learned.load(data_dir, limit=LIMIT, progress=False)
    assert len(builds) == 1
    texts = embed_learned.training_texts(data_dir, LIMIT)[::8]
    mine = learned(texts)
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
    teacher = embed_module.torch_embed()(texts)
    similarity = mine @ teacher.T
    own = np.diag(similarity)
    others = (similarity.sum(1) - own) / (len(texts) - 1)
    assert (own > others).all()
    assert np.allclose(learned.tokens(texts[0]), mine[:1])  # coherence's one point


def test_the_fit_reproduces_sentences_better_than_its_prior(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_learned, "ITERATIONS", STEPS)
    model = embed_module.torch_embed()
    texts = embed_learned.training_texts(data_dir, LIMIT)
    pieces, sentences, sums, counts = embed_learned.encode(model, texts, embed_learned._silent)
    assert counts.sum() == sum(map(len, pieces))
    start = embed_learned.prior(sums, counts, _Distilled().table)
    table = embed_learned.solve(pieces, sentences, start, embed_learned._silent)

    def fidelity(t: np.ndarray) -> float:
        means = embed_learned._unit(np.stack([t[p].mean(0) for p in pieces if len(p)]))
        return float(np.mean(np.sum(means * sentences[[bool(len(p)) for p in pieces]], 1)))

    assert fidelity(table) > fidelity(start) + 0.05
    unused = counts == 0
    assert np.allclose(table[unused], start[unused], atol=1e-4)  # pulled only toward the prior


def test_the_cache_is_read_back_and_a_torn_or_foreign_file_is_rebuilt(
    data_dir: Path, cache: Path, quick_builds: list[Path]
) -> None:
    builds = quick_builds
    first = embed_learned.load(data_dir, limit=LIMIT, progress=False)
    path = embed_learned.cache_file(data_dir, LIMIT)
    assert path.parent == cache and path.is_file() and len(builds) == 1
    again = embed_learned.load(data_dir, limit=LIMIT, progress=False)
    assert len(builds) == 1 and np.array_equal(again.table, first.table)

    path.write_bytes(path.read_bytes()[:1000])  # torn: no longer what its note says
    torn = embed_learned.load(data_dir, limit=LIMIT, progress=False)
    assert len(builds) == 2 and np.array_equal(torn.table, first.table)

    note = path.with_name(path.name + ".sha256")
    with open(path, "wb") as f:  # foreign: a well-noted file of the wrong shape
        np.save(f, np.zeros((3, 4), dtype=np.float16))
    from governor.overlays.embed.onnx_graph import file_sha256

    note.write_text(file_sha256(path) + "\n")
    foreign = embed_learned.load(data_dir, limit=LIMIT, progress=False)
    assert len(builds) == 3 and np.array_equal(foreign.table, first.table)


def test_the_runtime_switch_selects_the_learned_table(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = object()
    monkeypatch.setattr(embed_learned, "learned_embed", lambda: chosen)
    monkeypatch.setenv("GOVERNOR_EMBED_RUNTIME", "static-learned")
    assert embed_runtime.local_embed() is chosen
