"""`serve --workers 2` killed with SIGKILL takes its worker processes with it, as it takes
its indexer: none keeps the port, so a supervisor can start the server again there
(docs/production.md)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from morphz.devserver import database_url, free_port
from tests.morphz.test_serve_command import children, read_line_until

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


@pytest.mark.slow
def test_workers_die_when_the_server_is_killed(db: Any) -> None:
    port = free_port()
    env = dict(os.environ, DATABASE_URL=database_url(connection.settings_dict))
    env.update(PORT=str(port), HOST="127.0.0.1", LOG_LEVEL="WARNING")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--workers", "2", "--indexer", "none"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: list[int] = []
    try:
        try:
            read_line_until(server, "serving at", timeout=120)
        except AssertionError:
            server.kill()
            raise AssertionError(server.communicate()[1]) from None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # each worker started its app
            workers = [p for p, cmd in children(server.pid) if "spawn_main" in cmd]
            if len(workers) == 2 and all(_answers(port) for _ in range(2)):
                break
            time.sleep(0.2)
        assert len(workers) == 2, children(server.pid)
        server.send_signal(signal.SIGKILL)
        server.wait(30)

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(_gone(p) for p in workers):
            time.sleep(0.2)
        assert all(_gone(p) for p in workers), [p for p in workers if not _gone(p)]
        with socket.socket() as again:  # the port is free for the next server
            again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            again.bind(("127.0.0.1", port))
    finally:
        for pid in [server.pid, *workers]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _answers(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v1/", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
