"""The indexer process beside the server, kept alive and tied to the server's life.

How it works: docs/internals.md, section `morphz/supervisor.py`."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memory.search.indexer import clear_supervisor_status, write_supervisor_status

log = logging.getLogger("morphz.supervisor")

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
RESET_AFTER = 60.0
POLL_SECONDS = 0.5
PR_SET_PDEATHSIG = 1


def load_prctl() -> Callable[..., int] | None:
    """libc's prctl, loaded in the parent (a child between fork and exec must not dlopen)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None  # not Linux: run_indexer's --parent watch covers it


def die_with_parent(prctl: Callable[..., int] | None) -> Callable[[], None]:
    """A preexec_fn: SIGTERM to the child when the thread that started it dies (Linux)."""

    def preexec() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return preexec


# Set by `serve` for the worker processes it spawns: the pid they must not outlive.
WORKER_PARENT_ENV = "MORPHZ_WORKER_PARENT"


def die_with_serving_parent() -> None:
    """In a worker process `serve` spawned (WORKER_PARENT_ENV names its pid): SIGTERM to this
    process when that parent dies, even by SIGKILL, so a supervisor can start the server
    again on its port; and at once when the parent is already gone. Elsewhere nothing."""
    parent = os.environ.get(WORKER_PARENT_ENV)
    if not parent or not parent.isdigit() or int(parent) == os.getpid():
        return
    prctl = load_prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != int(parent):  # it died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)


def indexer_command(manage_py: Path) -> list[str]:
    """`manage.py run_indexer --parent <this pid>`."""
    return [sys.executable, str(manage_py), "run_indexer", "--parent", str(os.getpid())]


class IndexerSupervisor:
    """Runs `command` as a child, restarting it with back-off until stop()."""

    def __init__(
        self,
        command: list[str],
        *,
        stop_child: Callable[[subprocess.Popen[bytes]], None],
        backoff_first: float = BACKOFF_FIRST,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self.command = command
        self.stop_child = stop_child
        self.backoff_first = backoff_first
        self.backoff_max = backoff_max
        self.child: subprocess.Popen[bytes] | None = None
        self.preexec = die_with_parent(load_prctl())
        self.restarts = 0
        self.last_exit: int | None = None
        self._stop = threading.Event()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="indexer-supervisor", daemon=True)

    def start(self) -> IndexerSupervisor:
        self._thread.start()
        self._started.wait(30)
        return self

    def _spawn(self, restarts: int) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            self.command,
            env=dict(os.environ),
            stdout=subprocess.DEVNULL,
            preexec_fn=self.preexec,
        )
        write_supervisor_status("running", child.pid, restarts, self.last_exit)
        return child

    def _run(self) -> None:
        try:
            self._supervise()
        finally:
            # Stopped from this thread: its exit fires the child's PDEATHSIG (SIGTERM), which
            # must not cut into the child's own clean shutdown (SIGINT, embedded PostgreSQL
            # handle released).
            if self.child is not None:
                self.stop_child(self.child)

    def _supervise(self) -> None:
        delay = self.backoff_first
        self.child = self._spawn(0)
        began = time.monotonic()
        self._started.set()
        while not self._stop.wait(POLL_SECONDS):
            code = self.child.poll()
            if code is None:
                continue
            self.last_exit = code
            if time.monotonic() - began > RESET_AFTER:
                delay = self.backoff_first
            log.error(
                "search indexer (pid %d) exited with %s; restarting in %.1f s",
                self.child.pid,
                code,
                delay,
            )
            write_supervisor_status("restarting", None, self.restarts, code)
            if self._stop.wait(delay):
                return
            self.child = self._spawn(self.restarts + 1)
            self.restarts += 1
            began = time.monotonic()
            log.warning(
                "search indexer restarted (pid %d, restart %d)", self.child.pid, self.restarts
            )
            delay = min(delay * 2, self.backoff_max)

    def stop(self) -> None:
        """Stop supervising, then stop the child (SIGINT, up to 15 s, then SIGKILL)."""
        self._stop.set()
        self._thread.join(30)
        clear_supervisor_status()
