"""Applying an operator's act to a session's state; the act joins the audit trail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from governor.errors import ConfigError, expected
from governor.supervision.operator import ActKind, OperatorAct
from governor.supervision.state import SupervisorState


def apply_act(state: SupervisorState, act: OperatorAct, modes: Sequence[str]) -> SupervisorState:
    """``state`` after ``act``; an act on an ended session or naming an unknown mode is refused."""
    if state.ended:
        raise ConfigError(f"operator act {act.kind}: {expected('an open session', 'an ended one')}")
    if act.mode is not None and act.mode not in modes:
        raise ConfigError(f"operator act set_mode: {expected(f'one of {tuple(modes)}', act.mode)}")
    audit = (*state.audit, act)
    if act.kind is ActKind.PAUSE:
        return replace(state, paused=True, audit=audit)
    if act.kind is ActKind.RESUME:
        return replace(state, paused=False, audit=audit)
    if act.kind is ActKind.SET_MODE:
        return replace(state, operator_mode=act.mode, audit=audit)
    if act.kind is ActKind.RELEASE:
        return replace(state, operator_mode=None, audit=audit)
    return replace(state, ended=True, engaged=False, mode=None, audit=audit)
