#!/usr/bin/env python
"""Django's command-line utility; starts the embedded PostgreSQL first when needed."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")
    from morphz.config import ConfigError
    from morphz.embedded_db import ensure_database

    try:
        ensure_database()
        from django.core.management import execute_from_command_line
        from django.db import DatabaseError

        try:
            execute_from_command_line(sys.argv)
        except DatabaseError as exc:
            from morphz.database_hint import database_hint

            hint = None if "--traceback" in sys.argv else database_hint(exc)
            if hint is None:
                raise
            sys.exit(f"morphz: {hint}")
    except ConfigError as exc:
        sys.exit(f"morphz: configuration error: {exc}")


if __name__ == "__main__":
    main()
