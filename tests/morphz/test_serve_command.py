"""`manage.py serve`: it announces only once the port is bound,
fails clearly with a non-zero exit when the port is taken, runs the search indexer as its own
process, and on SIGTERM or SIGINT stops that process and releases the embedded PostgreSQL
(which stops when no other process uses it)."""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from morphz.devserver import free_port

ROOT = Path(__file__).resolve().parents[2]


def manage_env(data_dir: str, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(MORPHZ_DATA_DIR=data_dir, PORT=str(port), HOST="127.0.0.1", LOG_LEVEL="WARNING")
    return env


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the direct children of `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append((int(entry.name), cmdline))
    return found


def read_line_until(process: subprocess.Popen[str], needle: str, timeout: float) -> str:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        if selector.select(timeout=1):
            line = process.stdout.readline()
            seen += line
            if needle in line:
                return line
            if not line and process.poll() is not None:
                break
    raise AssertionError(f"{needle!r} not printed; output so far: {seen!r}")


def test_a_taken_port_is_a_clear_error_and_a_nonzero_exit() -> None:
    with socket.socket() as taken, tempfile.TemporaryDirectory(prefix="mz-", dir="/tmp") as d:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = manage_env(d, port)
        env["DATABASE_URL"] = os.environ.get("DATABASE_URL") or "postgres://unused@127.0.0.1:1/x"
        done = subprocess.run(
            [sys.executable, "manage.py", "serve"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    assert "already in use" in done.stderr
    assert f"127.0.0.1:{port}" in done.stderr
    assert "serving at" not in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_the_indexer_apart_and_stops_everything_on_a_signal(
    stop_signal: signal.Signals,
) -> None:
    with tempfile.TemporaryDirectory(prefix="mz-", dir="/tmp") as data_dir:
        port = free_port()
        env = manage_env(data_dir, port)
        migrate = [sys.executable, "manage.py", "migrate", "--noinput"]
        subprocess.run(migrate, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
        made = subprocess.run(
            [sys.executable, "manage.py", "create_context", "served"],
            cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        token = made.stdout.strip().splitlines()[-1].split()[-1]
        pgdata = Path(data_dir) / "pgdata"
        server = subprocess.Popen(
            [sys.executable, "manage.py", "serve"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # Announced only when bound: the very next connection is accepted.
            read_line_until(server, "serving at", timeout=120)
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass
            indexers = [p for p, cmd in children(server.pid) if "run_indexer" in cmd]
            assert len(indexers) == 1, children(server.pid)
            url = f"http://127.0.0.1:{port}/api/v1/contexts/served/"
            headers = {"Authorization": f"Bearer {token}"}
            event = {"kind": "tool_result", "content": "flakyquartz failed twice"}
            assert (
                httpx.post(url + "events/", json=event, headers=headers, timeout=60).status_code
                == 201
            )
            # The indexer process, not the server, makes the event searchable.
            deadline = time.monotonic() + 60
            hits: list[object] = []
            while not hits and time.monotonic() < deadline:
                found = httpx.get(
                    url + "search/", params={"q": "flakyquartz"}, headers=headers, timeout=30
                )
                hits = found.json().get("hits", [])
                time.sleep(0.3)
            assert hits, found.text
            assert (pgdata / "postmaster.pid").exists()

            server.send_signal(stop_signal)
            out, err = server.communicate(timeout=120)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()

        assert server.returncode == 0, err
        assert "Morphz stopped" in out
        for pid in indexers:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "zombie" in Path(f"/proc/{pid}/status").read_text()
            )
        # The last user of the embedded PostgreSQL left: the database stopped with it.
        assert json.loads((pgdata / ".handle_pids.json").read_text()) == []
        assert not (pgdata / "postmaster.pid").exists()
