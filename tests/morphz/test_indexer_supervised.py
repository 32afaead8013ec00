"""The indexer process `serve` runs is supervised (morphz/supervisor.py): restarted with
back-off when it dies, its state and restarts visible in search's `lag`, and it dies with
the server (issue 35: a dead indexer left search stale until a full restart, and a killed
server left its indexer running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory.search.indexer import supervisor_status, write_supervisor_status
from morphz.supervisor import IndexerSupervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
ROOT = Path(__file__).resolve().parents[2]


def stop_child(child: subprocess.Popen[bytes]) -> None:
    child.kill()
    child.wait()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split(") ", 1)[1][:1] != "Z"


def wait_for(check: Any, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MORPHZ_DATA_DIR", str(tmp_path))
    return tmp_path


def test_a_dead_indexer_is_restarted_and_lag_says_so(data_dir: Path) -> None:
    supervisor = IndexerSupervisor(SLEEPER, stop_child=stop_child, backoff_first=0.2).start()
    try:
        assert supervisor.child is not None
        first = supervisor.child.pid
        assert supervisor_status()["state"] == "running"
        os.kill(first, signal.SIGKILL)
        assert wait_for(lambda: supervisor.restarts == 1)
        assert supervisor.child.pid != first and alive(supervisor.child.pid)
        assert wait_for(lambda: supervisor_status()["state"] == "running")
        status = supervisor_status()
        assert status["restarts"] == 1 and status["last_exit"] == -signal.SIGKILL
    finally:
        supervisor.stop()
    assert supervisor_status()["state"] == "unsupervised"


def test_the_back_off_doubles_between_quick_deaths(data_dir: Path) -> None:
    dies = [sys.executable, "-c", "raise SystemExit(3)"]
    supervisor = IndexerSupervisor(dies, stop_child=stop_child, backoff_first=0.3).start()
    try:
        time.sleep(2.5)  # deaths at ~0, restarts after 0.3, 0.6, 1.2 s (+ start-up)
        assert 1 <= supervisor.restarts <= 3
        assert supervisor_status()["last_exit"] == 3
    finally:
        supervisor.stop()


def test_lag_says_down_when_the_recorded_indexer_is_gone(data_dir: Path) -> None:
    child = subprocess.Popen(SLEEPER)
    write_supervisor_status("running", child.pid, 2, None)
    assert supervisor_status() == {"state": "running", "restarts": 2, "last_exit": None}
    child.kill()
    child.wait()
    assert supervisor_status()["state"] == "down"


SERVER = """
import sys, time
import django
django.setup()
from morphz.supervisor import IndexerSupervisor
command = [sys.executable, "-c", "import time; time.sleep(120)"]
supervisor = IndexerSupervisor(command, stop_child=lambda c: c.kill()).start()
print(supervisor.child.pid, flush=True)
time.sleep(120)
"""


def test_the_indexer_dies_with_a_killed_server(data_dir: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "morphz.settings"}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdout=subprocess.PIPE
    )
    assert server.stdout is not None
    indexer = int(server.stdout.readline())
    assert alive(indexer)
    server.kill()
    server.wait()
    assert wait_for(lambda: not alive(indexer), 10)


def test_run_indexer_stops_when_its_parent_is_gone() -> None:
    import threading

    from memory.management.commands.run_indexer import watch_parent

    stop = threading.Event()
    watch_parent(os.getppid() + 1_000_000, stop, every=0.05)  # not our parent
    assert stop.wait(2)
    stop2 = threading.Event()
    watch_parent(os.getppid(), stop2, every=0.05)
    assert not stop2.wait(0.3)
    stop2.set()
