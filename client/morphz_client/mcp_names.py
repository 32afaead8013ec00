"""Reference `server-memory` names on Morphz ids, kept exactly (R66).

How it works: docs/internals.md, section `client/morphz_client/mcp_names.py`."""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from typing import Final

__all__ = [
    "NameProblem",
    "entity_frame_id",
    "legacy_frame_id",
    "relation_name",
    "relation_type",
]

RELATION_NAME_MAX: Final = 64  # memory.vocabulary.RELATION_NAME_MAX (the server's rule)
_SLUG_MAX: Final = 40
_DIGEST_CHARS: Final = 20  # 100 bits of SHA-256, in lower-case base32
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_LEGACY_BAD = re.compile(r"[^a-z0-9._-]+")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_ESCAPE = re.compile(r"\.(?:([a-z])|(-)|(\.)|([0-9]+)_)")


class NameProblem(ValueError):
    """A name that cannot be stored, with a message naming why."""


def entity_frame_id(name: str) -> str:
    """The frame id of the entity called `name` (exact: `C#` and `C++` differ)."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = _NOT_SLUG.sub("-", folded).strip("-")[:_SLUG_MAX].strip("-") or "e"
    raw = hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()
    digest = base64.b32encode(raw).decode().lower()[:_DIGEST_CHARS]
    return f"{slug}.{digest}"


def legacy_frame_id(name: str) -> str | None:
    """The frame id the earlier mapping gave `name` (None when it gave none)."""
    frame_id = _LEGACY_BAD.sub("-", name.strip().lower()).strip("-._")[:128]
    return frame_id or None


def relation_name(relation_type: str) -> str:
    """The Morphz relation name spelling `relation_type` exactly; NameProblem past 64
    characters."""
    parts: list[str] = []
    for char in relation_type:
        if char in _PLAIN:
            parts.append(char)
        elif "A" <= char <= "Z":
            parts.append("." + char.lower())
        elif char == " ":
            parts.append(".-")
        elif char == ".":
            parts.append("..")
        else:
            parts.append(f".{ord(char)}_")
    spelled = "".join(parts)
    if not spelled or not (spelled[0].isascii() and spelled[0].isalnum()) or spelled[0] == "0":
        spelled = "0" + spelled
    if len(spelled) > RELATION_NAME_MAX:
        raise NameProblem(
            f"relationType {relation_type[:80]!r} is too long to store: spelled as a Morphz "
            f"relation name it takes {len(spelled)} characters, at most {RELATION_NAME_MAX}"
        )
    return spelled


def relation_type(name: str) -> str:
    """The relation type a relation name spells (`relation_name`'s inverse); a name written
    by the earlier mapping (plain lower case) reads as itself."""
    spelled = name[1:] if name.startswith("0") else name
    out: list[str] = []
    at = 0
    while at < len(spelled):
        char = spelled[at]
        if char != ".":
            out.append(char)
            at += 1
            continue
        match = _ESCAPE.match(spelled, at)
        if match is None:
            return name  # not this spelling: an older name, read as written
        letter, space, dot, code = match.groups()
        if letter:
            out.append(letter.upper())
        elif space:
            out.append(" ")
        elif dot:
            out.append(".")
        else:
            point = int(code)
            if point > 0x10FFFF:
                return name
            out.append(chr(point))
        at = match.end()
    return "".join(out)
