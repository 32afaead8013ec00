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

        execute_from_command_line(sys.argv)
    except ConfigError as exc:
        sys.exit(f"morphz: configuration error: {exc}")


if __name__ == "__main__":
    main()
