"""SQL as SQL: named statements read from `.sql` files, rows read by column name.

A package keeps its statements in `<package>/queries.sql`, each after a header line
`-- name: load`; `statements("memory.tx")["load"]` is its text,
byte for byte (prepared statements are keyed by their text). Files are read once, on first
use, never at import. Rows come back by name (`named_rows`, `named_row`), never by position.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from memory.sql.columns import column_list

_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
# A column list of the registry (`memory.sql.columns`): `{{frame_state}}`, `{{f.frame_state}}`.
# An earlier statement of the same file, as a subquery or a prefix: `{{> frames_at}}`.
_INCLUDE = re.compile(r"\{\{>\s*([a-z_][a-z0-9_]*)\s*\}\}")
_COLUMNS = re.compile(r"\{\{(?:([a-z_][a-z0-9_]*)\.)?([a-z_][a-z0-9_]*)\}\}")


class Statements(Mapping[str, str]):
    """The named statements of one `.sql` file; an unknown name raises KeyError with the
    names the file holds."""

    def __init__(self, source: str, where: str) -> None:
        self._where = where
        self._by_name = parse_statements(source, where)

    def __getitem__(self, name: str) -> str:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{self._where} has no statement {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


def parse_statements(source: str, where: str = "<sql>") -> dict[str, str]:
    """Split `source` at its `-- name: x` headers into {name: statement}: the text up to the
    next header, trimmed, without the comment lines that open it (its notes) and a final
    semicolon, its `{{list}}` markers replaced by the registry's columns and `{{> name}}` by
    an earlier statement of the file. Lines before the
    first header are the file's notes. Raises ValueError on a repeated or empty statement."""
    found: dict[str, str] = {}
    headers = list(_HEADER.finditer(source))
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(source)
        lines = source[header.end() : end].strip().splitlines()
        while lines and lines[0].lstrip().startswith("--"):
            lines.pop(0)  # the statement's own notes, not sent
        text = "\n".join(lines).strip().removesuffix(";").rstrip()
        text = _COLUMNS.sub(lambda m: column_list(m.group(2), m.group(1) or ""), text)
        text = _INCLUDE.sub(lambda m: _earlier(found, m.group(1), where), text)
        name = header.group(1)
        if name in found:
            raise ValueError(f"{where}: statement {name!r} is named twice")
        if not text:
            raise ValueError(f"{where}: statement {name!r} is empty")
        found[name] = text
    return found


def _earlier(found: dict[str, str], name: str, where: str) -> str:
    if name not in found:
        raise ValueError(f"{where}: {name!r} is not a statement above its use")
    return found[name]


@cache
def statements(package: str, file: str = "queries.sql") -> Statements:
    """The named statements of `file` in `package` (a dotted name), read once."""
    source = resources.files(package).joinpath(file).read_text(encoding="utf-8")
    return Statements(source, f"{package}/{file}")


@cache
def sql_file(package: str, file: str) -> str:
    """The whole text of `file` in `package`, read once (a function definition)."""
    return resources.files(package).joinpath(file).read_text(encoding="utf-8")


def column_names(cursor: Any) -> list[str]:
    """The names of the columns of `cursor`'s last result."""
    return [column[0] for column in cursor.description]


def named_rows(cursor: Any) -> list[dict[str, Any]]:
    """Every remaining row of `cursor` as a dict by column name."""
    rows = cursor.fetchall()  # first: in pipeline mode the description comes with the rows
    names = column_names(cursor)
    return [dict(zip(names, row, strict=True)) for row in rows]


def named_row(cursor: Any) -> dict[str, Any] | None:
    """The next row of `cursor` as a dict by column name (None when there is none)."""
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip(column_names(cursor), row, strict=True))


def by_name(names: Sequence[str], row: Sequence[Any]) -> dict[str, Any]:
    """`row` (values in the order of `names`) as a dict by column name."""
    return dict(zip(names, row, strict=True))
