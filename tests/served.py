"""The served application in a subprocess, for tests that need a real server (browser tests,
MCP over HTTP): `uvicorn morphz.asgi:application` on the test database, on a loopback port."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from morphz.devserver import database_url, free_port, uvicorn_command

REPO = Path(__file__).resolve().parents[1]
# A busy shared machine can take a while to start it.
START_SECONDS = 90


@dataclass
class ServedApp:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def api(self, token: str) -> httpx.Client:
        """An HTTP client for the API with `token` as its Bearer token."""
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )


@contextmanager
def served_app(
    log_path: Path, ready_path: str, extra_env: dict[str, str] | None = None
) -> Iterator[ServedApp]:
    """Start the server, wait until `ready_path` answers 200, stop it afterwards. Its log is
    written to `log_path`; RuntimeError with the log's end when it does not start.
    `extra_env` overrides settings in the server's environment."""
    from django.db import connection

    port = free_port()
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": database_url(connection.settings_dict),
            "DJANGO_SETTINGS_MODULE": "morphz.settings",
            # The outbox worker is not needed here and would hold connections while the
            # test database is flushed between tests.
            "MORPHZ_INDEXER_IN_PROCESS": "0",
            "CHANNEL_LAYER_URL": "",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
        }
    )
    env.update(extra_env or {})
    # The browser tests relax Django's async guard in this process; the server keeps it.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            uvicorn_command(port), cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited: {log_path.read_text()[-3000:]}")
        try:
            if httpx.get(url + ready_path, timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"uvicorn did not start: {log_path.read_text()[-3000:]}")
        time.sleep(0.1)
    try:
        yield ServedApp(url, process, log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
