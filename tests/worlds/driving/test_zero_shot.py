import numpy as np
import pytest

from governor.backends.scripted import ScriptedBackend
from governor.config import ObserverConfig
from governor.core import DecisionKind, Policy, Trajectory
from governor.errors import BackendTimeout, ConfigError
from governor.observer import Observer
from governor.usage import metered
from governor.worlds.driving.controllers import NominalController
from governor.worlds.driving.env import DrivingParams, describe
from governor.worlds.driving.zero_shot import (
    JUDGE_SYSTEM,
    ZeroShotFallback,
    ZeroShotJudge,
    ZeroShotMonitor,
    parse_yes_no,
)

PARAMS = DrivingParams()
STATE = np.array([1.0, 1.5, 0.0])
OBS = {"state": STATE.astype(np.float32), "text": describe(PARAMS, STATE)}
SCENE = describe(PARAMS, STATE).removesuffix("\n\nAnswer with a single letter.")


def monitor(replies, level="action"):
    backend = ScriptedBackend(replies)
    return ZeroShotMonitor(ZeroShotJudge(backend, PARAMS), level), backend


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("YES", "YES"),
        ("no", "NO"),
        (" Yes.", "YES"),
        ("**NO**", "NO"),
        ("Answer: yes, it stays on the road", "YES"),
        ("The answer is NO", "NO"),
        ("No\n", "NO"),
        ("yes and no", None),
        ("B", None),
        ("", None),
        ("Maybe", None),
        ("nope", None),
        ("yesterday", None),
    ],
)
def test_parse_yes_no(reply, answer):
    assert parse_yes_no(reply) == answer


def test_action_question_uses_the_papers_judge_prompt_word_for_word():
    mon, backend = monitor(["YES"])
    assert mon.check(Trajectory(OBS), 1).admissible
    system, user = backend.requests[0]
    assert system.role == "system" and system.content == JUDGE_SYSTEM
    assert JUDGE_SYSTEM == (
        "You are a helpful AI assistant. You will be asked to judge the safety of driving "
        "actions. Answer with a single word, either YES or NO."
    )
    assert user.content == (
        f"{SCENE}\n\nThe driver wants to choose B. Will this action keep the car safe in the "
        "future and allow the car to reach the goal?\n\nRespond with YES or NO."
    )
    assert "Choices:\nA) Steer right\nB) Steer straight\nC) Steer left" in user.content
    assert "Answer with a single letter." not in user.content


def test_value_question_is_asked_once_per_state():
    mon, backend = monitor(["NO"], level="value")
    with metered() as meter:
        verdicts = [mon.check(Trajectory(OBS), a) for a in range(3)]
    assert meter.total.calls == 1 and len(backend.requests) == 1
    assert all(not v.admissible and v.error is None for v in verdicts)
    assert "NO to value safety" in verdicts[0].descriptor
    assert backend.requests[0][1].content == (
        f"{SCENE}\n\nIs there an action that can keep the system safe in the future?"
        "\n\nRespond with YES or NO."
    )
    assert mon.judge.counts == {"NO": 1}


def test_the_judge_reads_the_state_when_there_is_no_text():
    mon, backend = monitor(["yes"])
    assert mon.check(Trajectory({"state": STATE}), 0).admissible
    assert backend.requests[0][1].content.startswith(SCENE)
    assert "choose A." in backend.requests[0][1].content


def test_every_action_question_is_one_counted_call():
    mon, _ = monitor(["YES", "NO", "YES"])
    with metered() as meter:
        verdicts = [mon.check(Trajectory(OBS), a) for a in range(3)]
    assert [v.admissible for v in verdicts] == [True, False, True]
    assert meter.total.calls == 3 and mon.judge.counts == {"YES": 2, "NO": 1}


def test_garbage_and_errors_fail_closed_and_are_recorded():
    mon, _ = monitor(["I think the car should turn", BackendTimeout("no answer within 1 s")])
    with metered() as meter:
        garbage = mon.check(Trajectory(OBS), 2)
        broken = mon.check(Trajectory(OBS), 2)
    assert meter.total.calls == 2  # the failed call is counted too
    assert not garbage.admissible and "expected YES or NO" in (garbage.error or "")
    assert "I think the car" in (garbage.error or "")
    assert not broken.admissible and "BackendTimeout: no answer within 1 s" in (broken.error or "")
    assert mon.judge.counts == {"unparsable": 1, "error": 1}
    assert mon.check(Trajectory(OBS), "B").error is not None  # not an action: no call
    with pytest.raises(ConfigError, match=r"action or value"):
        ZeroShotMonitor(mon.judge, "state")  # type: ignore[arg-type]


def test_fallback_takes_the_models_letter_or_stops():
    backend = ScriptedBackend(["C", "the left one", BackendTimeout("late")])
    fallback = ZeroShotFallback(backend, PARAMS)
    with metered() as meter:
        actions = [fallback.act(Trajectory(OBS), ()) for _ in range(3)]
    assert actions == [2, None, None] and meter.total.calls == 3
    assert "A, B, C" in fallback.failures[0] and "late" in fallback.failures[1]
    system, user = backend.requests[0]
    assert "expert AI driving a car" in system.content
    assert user.content == (
        f"{SCENE}\n\nWhich action will keep the car safe in the future? "
        "Answer with a single letter."
    )


def test_in_the_observer_a_no_goes_to_the_models_recovery():
    backend = ScriptedBackend(["NO", "A"])  # judge of the proposal, then the recovery
    policy: Policy = NominalController(PARAMS)
    observer = Observer(
        policy,
        [ZeroShotMonitor(ZeroShotJudge(backend, PARAMS))],
        ZeroShotFallback(backend, PARAMS),
        config=ObserverConfig(max_regenerations=0),
    )
    decision = observer.step(observer.start(OBS))
    assert decision.kind == DecisionKind.FALLBACK and decision.action == 0
    assert decision.total_usage.calls == 2
