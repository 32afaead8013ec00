"""Pressure levels and the maintenance gate (R24, R25)."""

from __future__ import annotations

import pytest

from memory.contexts import update_context_settings
from memory.errors import MaintenanceRequired
from memory.pressure import pressure_state
from memory.timeline.events import register_action


class Ctx:
    def __init__(self, used: int, in_maintenance: bool = False) -> None:
        self.used_tokens = used
        self.capacity_tokens = 1000
        self.pressure_percent = 70
        self.maintenance_percent = 90
        self.maintenance_exit_percent = 80
        self.in_maintenance = in_maintenance


@pytest.mark.parametrize(
    ("used", "was_in_maintenance", "level"),
    [
        (0, False, "ok"),
        (699, False, "ok"),
        (700, False, "pressure"),
        (899, False, "pressure"),
        (900, False, "maintenance"),
        (850, True, "maintenance"),
        (800, True, "maintenance"),
        (799, True, "pressure"),
        (100, True, "ok"),
    ],
)
def test_levels_follow_thresholds_with_hysteresis(used, was_in_maintenance, level):
    assert pressure_state(Ctx(used, was_in_maintenance)).level == level


@pytest.fixture
def crowded(release_team):
    """Capacity 1000: a big log (829 tokens) and a small one (79) put it at 90.8 %."""
    agent = release_team
    update_context_settings(agent.context.pk, capacity_tokens=1000)  # in the history
    agent.refresh()
    big = agent.observe("x" * 3300)
    small = agent.observe("y" * 300)
    assert pressure_state(agent.refresh()).level == "maintenance"
    return agent, big, small


def test_action_is_refused_in_maintenance(crowded):
    agent, _, _ = crowded
    with pytest.raises(MaintenanceRequired) as caught:
        register_action(agent.context.pk, name="npm publish")
    assert caught.value.code == "maintenance_required"


def test_gate_stays_closed_until_usage_falls_below_exit_threshold(crowded):
    agent, big, small = crowded
    receipt = agent.commit(f"(context-tx (retire {small}))")  # transactions still work
    assert receipt["pressure"]["used_tokens"] == 829
    assert receipt["pressure"]["level"] == "maintenance"  # 82.9 % is above the 80 % exit
    with pytest.raises(MaintenanceRequired):
        register_action(agent.context.pk, name="npm publish")

    receipt = agent.commit(f"(context-tx (derive digest (from {big}) (gist ok)) (retire {big}))")
    assert receipt["pressure"]["level"] == "ok"
    event = register_action(agent.context.pk, name="npm publish").event
    assert (event.kind, event.request_state) == ("action", "open")


def test_compiled_state_lists_pending_actions(release_team):
    agent = release_team
    action = register_action(agent.context.pk, name="npm publish", arguments={"tag": "v1"}).event
    result = agent.evaluate()
    assert result["context"]["state"]["pending_actions"] == [
        {"ref": action.ref, "thread": "main", "name": "npm publish", "ticks": 0, "stale": False}
    ]
    agent.observe("published", delivers=[action.ref])
    assert agent.evaluate()["context"]["state"]["pending_actions"] == []
