"""The base of the commands that read or write memory (`create_context`, `create_token`, ...)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from morphz.database_hint import database_problem


class DataCommand(BaseCommand):
    """A management command on memory: answers at once, and says in one line what is wrong
    with the database instead of failing in its first query.

    Django's system checks are skipped: they import the whole URLconf (every view, the
    search model, the client) to check its error handlers, over half of a command's start,
    and nothing a data command does depends on them. `manage.py check`, `migrate` and
    `serve` still run them. Instead the database is probed once (`database_problem`): an
    unreachable server, an empty database (a new MORPHZ_DATA_DIR) or migrations not
    applied stop the command with a CommandError naming MORPHZ_DATA_DIR / DATABASE_URL and
    `migrate` (exit status 1)."""

    requires_system_checks: list[str] = []

    def execute(self, *args: Any, **options: Any) -> Any:
        """Run the command once the database is fit for it; CommandError naming the fix
        otherwise (before any output)."""
        problem = database_problem()
        if problem is not None:
            raise CommandError(problem)
        return super().execute(*args, **options)
