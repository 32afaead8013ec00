"""A throwaway Morphz stack for the reliability scripts: its own PostgreSQL (pgserver's
binaries, a fresh data folder), migrated, with a real `uvicorn morphz.asgi:application`
server in front. Both can be killed with SIGKILL and started again; nothing is shared with
the development or test databases.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from morphz.devserver import free_port, uvicorn_command

REPO = Path(__file__).resolve().parents[1]


def exit_on_sigterm() -> None:
    """Scripts: a SIGTERM unwinds like an error, so the stack's processes are stopped."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _pg_bin(name: str) -> str:
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def stop_group(proc: subprocess.Popen[bytes] | None, timeout: float = 20) -> None:
    """Stop a PostgreSQL started in its own process group: SIGINT (fast shutdown), then
    SIGKILL to the whole group after `timeout` seconds."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def kill_group(proc: subprocess.Popen[bytes] | None) -> bool:
    """A crash: SIGKILL to the process group at once; True when it was running."""
    if proc is None or proc.poll() is not None:
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    return True


def wait_for_postgres(
    dsn: str, proc: subprocess.Popen[bytes], log: Path, what: str = "postgres"
) -> None:
    """Return once PostgreSQL at `dsn` takes a connection; RuntimeError with the tail of
    its `log` when it exits or has not started within 60 seconds."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(psycopg.OperationalError):
            psycopg.connect(dsn, connect_timeout=2).close()
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {_tail(log)}")
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start: {_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.exists() else ""


class OwnPostgres:
    """PostgreSQL in `root`/data listening only on a unix socket in `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        # PostgreSQL refuses to run as root; pgserver runs it as its own system user then.
        self.user = "pgserver" if os.geteuid() == 0 else None

    def init(self) -> None:
        if self.user:
            import pwd

            from pgserver.utils import ensure_user_exists

            ensure_user_exists(self.user)
            entry = pwd.getpwnam(self.user)
            self.root.chmod(0o755)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [
                _pg_bin("initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-N",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            user=self.user,
        )

    def start(self) -> None:
        log = open(self.root / "postgres.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                _pg_bin("postgres"),
                "-D",
                str(self.data),
                "-k",
                str(self.root),
                "-c",
                "listen_addresses=",
                "-c",
                "max_connections=100",
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,  # its own process group: a kill takes every backend
            user=self.user,
        )
        wait_for_postgres(self.dsn, self.proc, self.root / "postgres.log")

    def kill9(self) -> None:
        """A crash: SIGKILL to the postmaster and every backend at once."""
        if kill_group(self.proc):
            self.kills += 1
        self.proc = None

    def stop(self) -> None:
        stop_group(self.proc)
        self.proc = None

    @property
    def dsn(self) -> str:
        return f"host={self.root} dbname=postgres user=postgres"

    @property
    def url(self) -> str:
        return f"postgres://postgres@/postgres?host={self.root}"


class Stack:
    """Own PostgreSQL + a served Morphz; `env` is what both child processes get."""

    def __init__(
        self, root: Path | None = None, *, workers: int = 1, fd_limit: int | None = None
    ) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="mzrel-", dir="/tmp"))
        self.pg = OwnPostgres(self.root)
        self.port = free_port()
        self.workers = workers
        self.fd_limit = fd_limit  # the server's RLIMIT_NOFILE (None: inherited)
        self.server: subprocess.Popen[bytes] | None = None
        self.server_kills = 0
        self.env = {
            **os.environ,
            "DATABASE_URL": self.pg.url,
            "MORPHZ_DATA_DIR": str(self.root / "var"),
            "MORPHZ_INDEXER_IN_PROCESS": "0",
            "MORPHZ_THROTTLE_RATE": "100000000/min",
            "DJANGO_SETTINGS_MODULE": "morphz.settings",
        }

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> Stack:
        self.pg.init()
        self.pg.start()
        self.manage("migrate", "--noinput")
        self.start_server()
        return self

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout

    def create_context(self, slug: str, *extra: str) -> str:
        """A new context; returns its API token."""
        return self.manage("create_context", slug, *extra).strip().splitlines()[-1].strip()

    def start_server(self) -> None:
        log = open(self.root / "server.log", "ab")  # noqa: SIM115
        self.server = subprocess.Popen(
            uvicorn_command(self.port, workers=self.workers),
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=log,
            start_new_session=True,
            preexec_fn=self._limit_descriptors if self.fd_limit else None,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(
                    f"server exited: {(self.root / 'server.log').read_text()[-2000:]}"
                )
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(f"{self.base}/api/v1/", timeout=1)
                return
            time.sleep(0.1)
        raise RuntimeError("server did not start")

    def _limit_descriptors(self) -> None:
        import resource

        assert self.fd_limit is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.fd_limit, self.fd_limit))

    def kill_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(10)
            self.server_kills += 1
        self.server = None

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait(5)
        self.server = None

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.pg.dsn, autocommit=True)

    def down(self, keep: bool = False) -> None:
        self.stop_server()
        self.pg.stop()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Stack:
        return self.up()

    def __exit__(self, *exc: Any) -> None:
        self.down()
