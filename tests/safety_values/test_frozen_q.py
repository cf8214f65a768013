"""The frozen-head LLM safety value on tiny randomly initialised Llama models (see test_llm_q)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.hf

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("peft")

from test_llm_q import PARAMS, _save_tiny  # noqa: E402

from governor.core import Trajectory  # noqa: E402
from governor.errors import ConfigError  # noqa: E402
from governor.safety_values.ddqn import safety_target  # noqa: E402
from governor.safety_values.filter import SafetyFilter  # noqa: E402
from governor.safety_values.frozen_q.head import FrozenQ, HeadSettings, QHead  # noqa: E402
from governor.safety_values.frozen_q.hidden_states import HiddenStates, model_hash  # noqa: E402
from governor.safety_values.frozen_q.train_head import (  # noqa: E402
    FrozenQTrainConfig,
    collect_transitions,
    train_frozen_q,
)
from governor.safety_values.llm_q.evaluate import evaluate_llm_q  # noqa: E402
from governor.usage import metered  # noqa: E402
from governor.worlds.driving.env import LABELS, margin  # noqa: E402
from governor.worlds.driving.llm_task import DrivingLLMTask  # noqa: E402
from governor.worlds.driving.task import sample_live_states  # noqa: E402

TINY = FrozenQTrainConfig(transitions=12, cars=3, iterations=40, batch_size=8, lr=1e-2)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The tiny model, a copy of it, one with other weights (same config) and a cache folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        torch.set_num_threads(1)
        root = tmp_path_factory.mktemp("frozen-llms")
        tiny = _save_tiny(root / "tiny")
        shutil.copytree(tiny, root / "copy")
        reseeded = _save_tiny(root / "reseeded", seed=5)
        yield {"tiny": tiny, "copy": root / "copy", "reseeded": reseeded, "cache": root / "cache"}


@pytest.fixture(scope="module")
def trained(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> FrozenQ:
    out = tmp_path_factory.mktemp("frozen-q") / "ck"
    q = train_frozen_q(
        models["tiny"], out, task=DrivingLLMTask(), config=TINY, cache_dir=models["cache"],
        progress=False,
    )  # fmt: skip
    assert (out / "head.pt").is_file()
    return q


def test_the_model_hash_tells_weights_apart_under_one_config(models: dict[str, Path]) -> None:
    assert model_hash(models["tiny"]) == model_hash(models["copy"])
    assert model_hash(models["tiny"]) != model_hash(models["reseeded"])


def test_hidden_states_are_computed_once_and_read_back_from_disk(models: dict[str, Path]) -> None:
    cache = models["cache"] / "fresh"
    texts = ["the car is 5 m away", "the goal is 9 m away", "the car is 5 m away"]
    first = HiddenStates(models["tiny"], "system", cache_dir=cache, progress=False)
    with metered() as meter:
        vectors = first(texts)
    assert first.forward_passes == 2  # the repeated text runs once
    assert meter.total.calls == 1  # one batched forward pass
    np.testing.assert_array_equal(vectors[0], vectors[2])
    again = HiddenStates(models["tiny"], "system", cache_dir=cache, progress=False)
    with metered() as meter:
        np.testing.assert_allclose(again(texts), vectors)
    assert meter.total.calls == 0
    other_prompt = HiddenStates(models["tiny"], "another system", cache_dir=cache, progress=False)
    assert other_prompt.file != again.file and not other_prompt.vectors


def test_the_hidden_state_is_the_models_last_position(models: dict[str, Path]) -> None:
    h = HiddenStates(models["tiny"], "system", cache_dir=models["cache"] / "x", progress=False)
    model = transformers.AutoModelForCausalLM.from_pretrained(models["tiny"])
    ids = torch.tensor([h.prompt_ids("the car is 7 m away")])
    with torch.inference_mode():
        want = model(input_ids=ids, output_hidden_states=True).hidden_states[-1][0, -1]
    np.testing.assert_allclose(h(["the car is 7 m away"])[0], want.numpy(), atol=1e-5)


def test_collected_transitions_follow_the_task() -> None:
    task = DrivingLLMTask()
    data = collect_transitions(task, 7, 3, np.random.default_rng(0))
    assert len(data.texts) == len(data.next_texts) == len(data.actions) == 7
    assert set(data.actions.tolist()) <= {0, 1, 2}
    assert data.levels.shape == data.done.shape == (7,)
    # a failed s' (l < 0) always ends the episode
    assert np.all(data.done[data.levels < 0.0])


def test_the_head_fits_the_td_target_of_its_transitions(models: dict[str, Path]) -> None:
    """A head trained only on terminal transitions learns Q(s, a) = l(s') there."""
    h = torch.randn(6, 5)
    head = QHead(5, 3, HeadSettings(hidden=16))
    head.standardise_on(h)
    levels = torch.linspace(-1.0, 1.0, 6)
    actions = torch.tensor([0, 1, 2, 0, 1, 2])
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    for _ in range(600):
        y = safety_target(levels, torch.ones(6, dtype=torch.bool), head(h), head(h), 0.99)
        loss = torch.nn.functional.mse_loss(head(h).gather(1, actions[:, None]).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    got = head(h).gather(1, actions[:, None]).squeeze(1).detach()
    np.testing.assert_allclose(got.numpy(), levels.numpy(), atol=0.05)


def test_training_saves_a_checkpoint_that_reloads_the_same_q(
    trained: FrozenQ, models: dict[str, Path]
) -> None:
    info = trained.info
    assert info["iteration"] == TINY.iterations and info["transitions"] == TINY.transitions
    assert 0 < info["forward_passes"] <= 2 * TINY.transitions
    meta = json.loads((Path(trained.info["out"]) / "meta.json").read_text())
    assert meta["obs"] == "llm-head" and meta["model_hash"] == model_hash(models["tiny"])
    states = sample_live_states(PARAMS, 5, np.random.default_rng(3))
    again = FrozenQ.load(
        trained.info["out"], task=DrivingLLMTask(), cache_dir=models["cache"], progress=False
    )
    np.testing.assert_allclose(again.q_states(states), trained.q_states(states), atol=1e-6)


def test_a_checkpoint_for_other_weights_or_env_is_refused(
    trained: FrozenQ, models: dict[str, Path], tmp_path: Path
) -> None:
    moved = FrozenQ.load(
        trained.info["out"], models["copy"], task=DrivingLLMTask(), allow_moved=True,
        cache_dir=models["cache"], progress=False,
    )  # fmt: skip
    assert moved.features.hash == trained.features.hash
    with pytest.raises(ConfigError, match="hash"):
        FrozenQ.load(
            trained.info["out"], models["reseeded"], task=DrivingLLMTask(), allow_moved=True,
            cache_dir=models["cache"], progress=False,
        )  # fmt: skip
    with pytest.raises(ConfigError, match="env"):
        FrozenQ.load(trained.info["out"], task=DrivingLLMTask(), env="commerce", progress=False)
    with pytest.raises(ConfigError, match=r"meta\.json"):
        FrozenQ.load(tmp_path, task=DrivingLLMTask(), progress=False)


def test_the_frozen_value_is_measured_and_filters_like_any_value(trained: FrozenQ) -> None:
    states = sample_live_states(PARAMS, 6, np.random.default_rng(4))

    def exact(s: np.ndarray) -> np.ndarray:
        return margin(PARAMS, s)

    metrics = evaluate_llm_q(trained, exact, states)
    assert metrics["obs"] == "llm-head" and 0.0 <= metrics["agreement"] <= 1.0
    q = trained.q_states(states[:1])[0]
    guard = SafetyFilter(trained, float(np.sort(q)[1]), labels=LABELS)
    traj = Trajectory({"state": states[0]})
    verdicts = [guard.check(traj, a) for a in range(3)]
    assert [v.admissible for v in verdicts] == [bool(x > np.sort(q)[1]) for x in q]


def test_the_commands_train_and_evaluate_a_frozen_head_with_capped_states(
    models: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from governor.cli import main

    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path / "cache"))
    out, report = tmp_path / "head-ck", tmp_path / "eval.json"
    grid = ["--grid-nx", "21", "--grid-ny", "11", "--grid-ntheta", "16"]
    train = ["train", "safety-value", "--obs", "llm-head", "--model-path", str(models["tiny"])]
    budget = ["--head-transitions", "6", "--llm-cars", "2", "--iterations", "5", "--minutes", "1"]
    assert main([*train, *budget, "--out", str(out), *grid]) == 0
    assert (out / "head.pt").is_file()
    assert (tmp_path / "cache" / "hidden").is_dir()  # the hidden states went to the cache
    ev = ["eval", "safety-value", str(out), "--states", "12", "--llm-states", "5"]
    assert main([*ev, "--json", str(report), *grid]) == 0
    metrics = json.loads(report.read_text())
    assert metrics["obs"] == "llm-head" and metrics["env"] == "driving"
    assert metrics["states"] == 5 and metrics["states_requested"] == 12
    assert "5 of the 12 held-out states" in capsys.readouterr().out
    # a head checkpoint is not a LoRA one, and a new folder is required
    assert main([*ev, "--obs", "llm", *grid]) == 2
    assert main([*train, *budget, "--out", str(out)]) == 2


@pytest.mark.usefixtures("small_baselines")
def test_bench_reguard_adds_a_frozen_head_row(
    trained: FrozenQ, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governor.papers.reguard import ReGuardBenchConfig, run

    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path / "cache"))

    cfg = ReGuardBenchConfig(
        tables="driving",
        episodes=2,
        learned="",
        checkpoints=str(tmp_path),
        llm_checkpoint=trained.info["out"],
        monitor_steps=5,
    )
    result = run(cfg, progress=False)["driving"]
    assert (tmp_path / "cache" / "hidden").is_dir()  # the hidden states went to the cache
    row = next(r for r in result["table1"] if r["guard"] == "reguard_llm_head")
    assert row["episodes"] == 2 and 0.0 <= row["success_rate"] <= 1.0
    assert "reguard_llm" not in result["margins"]
