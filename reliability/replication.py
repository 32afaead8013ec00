"""A streaming standby of a running PostgreSQL, on loopback, for tests and the failover drill.

`Standby.clone(primary_socket_dir, root)` takes a base backup of the primary
(`pg_basebackup -R -X stream`: the backup plus the settings that make it follow the
primary) and starts it as a hot standby listening on 127.0.0.1 on a free port. It uses the
PostgreSQL binaries of the embedded server (pgserver's), else the machine's; a machine with
neither has `binaries()` None and the callers skip saying so. Run as root (containers),
PostgreSQL refuses to start: every binary then runs as pgserver's own system user, as the
embedded server does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg

from morphz.devserver import free_port
from reliability.stack import kill_group, stop_group, wait_for_postgres

SYSTEM_BINARIES = Path("/usr/lib/postgresql")


def binaries() -> Path | None:
    """The folder holding initdb, postgres and pg_basebackup: pgserver's, else the newest
    of the machine's; None when there are none."""
    try:
        import pgserver

        bundled = Path(pgserver.__file__).parent / "pginstall" / "bin"
        if (bundled / "pg_basebackup").exists():
            return bundled
    except ImportError:
        pass
    if SYSTEM_BINARIES.is_dir():
        found = sorted(SYSTEM_BINARIES.glob("*/bin/pg_basebackup"), key=lambda p: p.parts[-3])
        if found:
            return found[-1].parent
    return None


def system_user() -> str | None:
    """The user PostgreSQL runs as: pgserver's own when this process is root."""
    if os.geteuid() != 0:
        return None
    from pgserver.utils import ensure_user_exists

    ensure_user_exists("pgserver")
    return "pgserver"


def give_to(path: Path, user: str | None) -> None:
    if user is None:
        return
    import pwd

    entry = pwd.getpwnam(user)
    path.chmod(0o755)
    os.chown(path, entry.pw_uid, entry.pw_gid)


class Standby:
    """A hot standby in `root`/data streaming from a primary; TCP on 127.0.0.1:`port`."""

    def __init__(self, root: Path, bin_dir: Path, *, durable: bool = True) -> None:
        self.root = root
        self.durable = durable
        self.data = root / "data"
        self.bin = bin_dir
        self.port = free_port()
        self.user = system_user()
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def clone(
        cls,
        primary_host: str,
        root: Path,
        *,
        primary_port: str = "",
        bin_dir: Path | None = None,
        name: str = "standby",
        durable: bool = True,
    ) -> Standby:
        """A base backup of the primary at `primary_host` (a socket folder or an address),
        started and streaming; `name` is its application_name (what synchronous_standby_names
        lists). `durable=False` (tests) syncs nothing to disk: the copy, its start-up and
        its shutdown take a fraction of the time, and a machine crash would lose it."""
        found = bin_dir or binaries()
        if found is None:
            raise RuntimeError("no PostgreSQL binaries (pgserver's or the machine's)")
        standby = cls(root, found, durable=durable)
        root.mkdir(parents=True, exist_ok=True)
        give_to(root, standby.user)
        subprocess.run(
            [
                str(found / "pg_basebackup"),
                "-D",
                str(standby.data),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                *([] if durable else ["--no-sync"]),
                "-d",
                f"host={primary_host} port={primary_port or 5432} user=postgres "
                f"application_name={name}",
            ],
            check=True,
            capture_output=True,
            user=standby.user,
            timeout=300,
        )
        standby.start()
        return standby

    def start(self) -> None:
        log = open(self.root / "postgres.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-k",
                str(self.root),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "hot_standby=on",
                # Reads on the standby are never cancelled for WAL they hold up for this
                # long; a cancelled read goes to the primary anyway (memory.replicas).
                "-c",
                "max_standby_streaming_delay=5s",
                "-c",
                f"fsync={'on' if self.durable else 'off'}",
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,
            user=self.user,
        )
        wait_for_postgres(self.dsn(), self.proc, self.root / "postgres.log", "standby")

    def log_tail(self) -> str:
        path = self.root / "postgres.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user=postgres"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def sql(self, statement: str, dbname: str = "postgres") -> Any:
        """The first value of `statement`'s first row (None without rows)."""
        with psycopg.connect(self.dsn(dbname), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(statement)
            row = cursor.fetchone() if cursor.description is not None else None
        return None if row is None else row[0]

    def pause_replay(self) -> None:
        """The standby keeps receiving WAL but applies none of it: a stale replica."""
        self.sql("SELECT pg_wal_replay_pause()")
        deadline = time.monotonic() + 10
        while self.sql("SELECT pg_get_wal_replay_pause_state()") != "paused":
            if time.monotonic() > deadline:
                raise RuntimeError("replay did not pause")
            time.sleep(0.01)

    def resume_replay(self) -> None:
        self.sql("SELECT pg_wal_replay_resume()")

    def wait_for(self, primary_lsn: str, timeout: float = 30) -> None:
        """Until the standby has replayed the primary's WAL up to `primary_lsn`."""
        deadline = time.monotonic() + timeout
        while True:
            behind = self.sql(f"SELECT pg_last_wal_replay_lsn() < '{primary_lsn}'::pg_lsn")
            if not behind:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"standby did not reach {primary_lsn}")
            time.sleep(0.01)

    def promote(self) -> None:
        """The standby becomes a primary (what a failover does), taking writes."""
        self.sql("SELECT pg_promote(true, 60)")

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then SIGKILL to its process group after 20 seconds."""
        stop_group(self.proc)
        self.proc = None

    def kill9(self) -> None:
        """A crash: SIGKILL to the postmaster and every backend at once."""
        kill_group(self.proc)
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
