"""The embedded PostgreSQL server (pgserver) used when no DATABASE_URL is set.

`ensure_database()` is called by `manage.py`, the ASGI application and the test suite
before Django opens a connection. pgserver reference-counts the processes that use one
data folder and stops the server when the last of them exits.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from morphz.config import ConfigError, database_config, embedded_pgdata

log = logging.getLogger(__name__)

_server: Any = None


def ensure_database() -> None:
    """Start (or join) the embedded server unless DATABASE_URL points elsewhere."""
    global _server
    config = database_config()
    if not config.embedded or _server is not None:
        return
    pgdata = embedded_pgdata()
    if "XDG_RUNTIME_DIR" not in os.environ:
        # pgserver's lock files go to the runtime dir; headless machines often have none.
        runtime = pgdata.parent / "run"
        runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
        runtime.chmod(0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    import pgserver

    # pgserver logs every pg_ctl call at INFO; keep start and stop quiet.
    logging.getLogger("pgserver").setLevel(logging.WARNING)

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _server = pgserver.get_server(pgdata, cleanup_mode="stop")
    uri: str = _server.get_uri()
    if f"host={pgdata}" not in uri:
        raise ConfigError(
            f"the embedded PostgreSQL put its socket outside {pgdata} ({uri}); "
            "set MORPHZ_DATA_DIR to a shorter path (unix sockets allow ~100 characters)"
        )
    log.info("embedded PostgreSQL ready at %s", pgdata)


def stop_database() -> None:
    """Release this process's handle; the server stops when no process holds one."""
    global _server
    if _server is not None:
        _server.cleanup()
        _server = None
