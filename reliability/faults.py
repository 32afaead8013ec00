"""Faults injected from outside Morphz: a TCP proxy in front of PostgreSQL that can drop
every connection and refuse new ones (the database "dies") and come back, and helpers to
start a real server process against a chosen database.

Nothing here replaces a part of Morphz: the server, Django and PostgreSQL are the real ones;
only the wire between them is cut.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]


class PgProxy:
    """Forwards 127.0.0.1:`port` to PostgreSQL (unix socket dir or host:port).

    `cut()` closes the listening socket and resets every open connection: to the server it
    looks exactly like PostgreSQL died. `restore()` listens again on the same port.
    """

    def __init__(self, target_host: str, target_port: int | str = 5432, port: int = 0) -> None:
        self.target_host = target_host
        self.target_port = int(target_port or 5432)
        self.port = port
        self._listener: socket.socket | None = None
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _connect_target(self) -> socket.socket:
        if self.target_host.startswith("/"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(os.path.join(self.target_host, f".s.PGSQL.{self.target_port}"))
        else:
            sock = socket.create_connection((self.target_host, self.target_port))
        return sock

    def start(self) -> PgProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="pg-proxy", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        assert self._listener is not None
        sel.register(self._listener, selectors.EVENT_READ, None)
        peers: dict[socket.socket, socket.socket] = {}
        while not self._stop.is_set():
            for key, _ in sel.select(timeout=0.05):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if key.data is None:
                    try:
                        client, _ = sock.accept()
                        upstream = self._connect_target()
                    except OSError:
                        with contextlib.suppress(Exception):
                            client.close()
                        continue
                    with self._lock:
                        self._pairs.append((client, upstream))
                    peers[client], peers[upstream] = upstream, client
                    sel.register(client, selectors.EVENT_READ, "c")
                    sel.register(upstream, selectors.EVENT_READ, "u")
                    continue
                other = peers.get(sock)
                try:
                    data = sock.recv(65536)
                    if not data:
                        raise OSError("closed")
                    assert other is not None
                    other.sendall(data)
                except OSError:
                    for s in (sock, other):
                        if s is None:
                            continue
                        with contextlib.suppress(Exception):
                            sel.unregister(s)
                        with contextlib.suppress(Exception):
                            s.close()
                        peers.pop(s, None)
        for s in list(peers):
            with contextlib.suppress(Exception):
                sel.unregister(s)
            with contextlib.suppress(Exception):
                s.close()
        sel.close()

    def cut(self) -> None:
        """The database dies: refuse new connections, reset the open ones."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._lock:
            for pair in self._pairs:
                for s in pair:
                    with contextlib.suppress(Exception):
                        s.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                        )
                        s.close()
            self._pairs.clear()

    def restore(self) -> None:
        self.start()

    def url(self, name: str, user: str = "postgres", password: str = "") -> str:
        auth = f"{user}:{password}@" if password else f"{user}@"
        return f"postgres://{auth}127.0.0.1:{self.port}/{name}"


def target_of(settings: Mapping[str, Any]) -> tuple[str, int]:
    """(host or socket dir, port) of Django connection settings."""
    return str(settings.get("HOST") or "localhost"), int(settings.get("PORT") or 5432)


def start_server(
    port: int, env: Mapping[str, str], *, log: Path | None = None, workers: int = 1
) -> subprocess.Popen[bytes]:
    """`uvicorn morphz.asgi:application` on 127.0.0.1:`port` in a child process."""
    from morphz.devserver import uvicorn_command

    full_env = {**os.environ, "MORPHZ_INDEXER_IN_PROCESS": "0", **env}
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        uvicorn_command(port, workers=workers), cwd=REPO, env=full_env, stdout=out, stderr=out
    )


def wait_until_serving(base: str, proc: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{base}/api/v1/", timeout=1)
            return
        time.sleep(0.1)
    raise RuntimeError("server did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
