"""A group's leader waits (at most GATHER_SECONDS) for as many transactions as the last group
held, so writers committing together are locked, loaded and decided together; after a
group of one nobody waits."""

from __future__ import annotations

import threading
import time

from memory.tx import group


def queued(queue: group._Queue, count: int) -> None:
    with queue.changed:
        for _ in range(count):
            queue.items.append(group._Waiting(object()))
            queue.arrived.notify()


def test_the_leader_takes_as_many_as_the_last_group_once_they_arrive(monkeypatch):
    monkeypatch.setattr(group, "GATHER_SECONDS", 30.0)
    queue = group._Queue()
    queue.last_group = 3
    queued(queue, 1)
    taken: list[int] = []
    leader = threading.Thread(target=lambda: taken.append(len(group._gather(queue))))
    leader.start()
    time.sleep(0.05)
    assert taken == []  # still waiting for the other two
    queued(queue, 2)
    leader.join(10)
    assert taken == [3]


def test_the_wait_ends_after_gather_seconds_with_what_came(monkeypatch):
    monkeypatch.setattr(group, "GATHER_SECONDS", 0.05)
    queue = group._Queue()
    queue.last_group = 8
    queued(queue, 2)
    began = time.monotonic()
    assert len(group._gather(queue)) == 2
    assert 0.04 <= time.monotonic() - began < 10


def test_after_a_group_of_one_nobody_waits(monkeypatch):
    monkeypatch.setattr(group, "GATHER_SECONDS", 30.0)
    queue = group._Queue()
    queued(queue, 1)
    began = time.monotonic()
    assert len(group._gather(queue)) == 1
    assert time.monotonic() - began < 10
