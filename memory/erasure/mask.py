"""Masking erased text so that every size stays what it was (R64). Plain Python, no database.

How it works: docs/internals.md, section `memory/erasure/mask.py`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from memory.kinds import ACTION, APPENDABLE_KINDS
from memory.tokens import WIDE_CHARACTER

NARROW_MASK = "█"
WIDE_MASK = "〓"
# A quote of a whole erased item is looked for elsewhere only from this length on (shorter
# texts, like "yes", would mask unrelated words everywhere).
MIN_QUOTE = 8
CARD_MIN_DIGITS = 12
_KEPT = '"\\\\\\x00-\\x1f\\x7f\\u2028\\u2029'
_MASKABLE = re.compile(f"[^{_KEPT}]")
_SEPARATORS = re.compile(r"[ \-]")


def _mask_char(match: re.Match[str]) -> str:
    return WIDE_MASK if WIDE_CHARACTER.match(match.group()) else NARROW_MASK


def mask_text(text: str) -> str:
    """Every character of `text` masked, length and token estimate kept."""
    return _MASKABLE.sub(_mask_char, text)


# Stand-ins for a mask character where two masked keys of one map would be one: of the
# same width and token estimate, so a renamed key keeps every size.
_NARROW_VARIANTS = NARROW_MASK + "▓▒░"
_WIDE_VARIANTS = WIDE_MASK + "〒"
# Every character a masked text may hold.
MASK_CHARACTERS = _NARROW_VARIANTS + _WIDE_VARIANTS


def _variant(key: str, n: int) -> str | None:
    """The `n`-th variant of a masked key (0: itself): mask characters from the end replaced
    by their stand-ins, counting in mixed radix; None when the key has no `n`-th."""
    chars = list(key)
    for i in range(len(chars) - 1, -1, -1):
        alphabet = _NARROW_VARIANTS if chars[i] == NARROW_MASK else _WIDE_VARIANTS
        if chars[i] not in (NARROW_MASK, WIDE_MASK):
            continue
        n, digit = divmod(n, len(alphabet))
        chars[i] = alphabet[digit]
        if n == 0:
            return "".join(chars)
    return None


def _rekeyed(pairs: list[tuple[str, bool, Any]]) -> dict[str, Any]:
    """A map from `(key, masked, value)` in order: a masked key that would meet another key
    takes its first free variant (same length), so no two keys become one. Raises
    ValueError when none is free (more same-length keys than variants: never in practice,
    a key of n mask characters has at least 2**n)."""
    taken = {key for key, masked, _ in pairs if not masked}
    out: dict[str, Any] = {}
    for key, masked, value in pairs:
        if masked:
            n, free = 0, _variant(key, 0)
            while free is not None and (free in taken or free in out):
                n += 1
                free = _variant(key, n)
            if free is None:
                raise ValueError(f"no free mask for a key of {len(key)} characters")
            key = free
        out[key] = value
    return out


def mask_whole(value: Any, *, keys: bool = False) -> Any:
    """A JSON value with every string value masked, and with `keys` every key of its maps
    too (a body's keys are its text; a runtime payload's are its schema)."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, dict):
        if not keys:
            return {key: mask_whole(item) for key, item in value.items()}
        return _rekeyed(
            [(mask_text(key), True, mask_whole(item, keys=True)) for key, item in value.items()]
        )
    if isinstance(value, list):
        return [mask_whole(item, keys=keys) for item in value]
    return value


def _literal_pattern(literal: str) -> str:
    digits = _SEPARATORS.sub("", literal)
    if digits.isdigit() and digits.isascii() and len(digits) >= CARD_MIN_DIGITS:
        return r"[ \-]?".join(digits)
    return re.escape(literal)


class Matcher:
    """Every occurrence of any of `literals` (longest first); empty literals are ignored.
    Built from escaped literals only, so matching is linear in the text searched."""

    def __init__(self, literals: Iterable[str]) -> None:
        unique = sorted({lit for lit in literals if lit}, key=lambda lit: (-len(lit), lit))
        self.literals = unique
        self.regex = (
            re.compile("|".join(_literal_pattern(lit) for lit in unique)) if unique else None
        )

    def __bool__(self) -> bool:
        return self.regex is not None

    def finds(self, text: str) -> bool:
        """Whether `text` holds an occurrence."""
        return self.regex is not None and self.regex.search(text) is not None


def _mask_match(match: re.Match[str]) -> str:
    return mask_text(match.group())


def mask_matches(text: str, matcher: Matcher) -> tuple[str, int]:
    """`text` with every occurrence masked, and how many there were."""
    if matcher.regex is None or not text:
        return text, 0
    return matcher.regex.subn(_mask_match, text)


def mask_json(value: Any, matcher: Matcher, *, keys: bool = False) -> tuple[Any, int]:
    """A JSON value with every occurrence in its string values (with `keys`, in its maps'
    keys too) masked, and how many."""
    if isinstance(value, str):
        return mask_matches(value, matcher)
    if isinstance(value, dict):
        pairs: list[tuple[str, bool, Any]] = []
        total = 0
        for key, item in value.items():
            masked_item, n = mask_json(item, matcher, keys=keys)
            new_key, m = mask_matches(key, matcher) if keys else (key, 0)
            pairs.append((new_key, m > 0, masked_item))
            total += n + m
        return _rekeyed(pairs), total
    if isinstance(value, list):
        items = []
        total = 0
        for item in value:
            masked, n = mask_json(item, matcher, keys=keys)
            items.append(masked)
            total += n
        return items, total
    return value, 0


def quotes_of(value: Any) -> list[str]:
    """The texts of an erased item looked for elsewhere: each string value, and each line
    of it, of at least MIN_QUOTE characters (stripped)."""
    out: list[str] = []
    if isinstance(value, str):
        if len(value.strip()) >= MIN_QUOTE:
            out.append(value)
        for line in value.splitlines():
            line = line.strip()
            if len(line) >= MIN_QUOTE:
                out.append(line)
    elif isinstance(value, dict):
        for item in value.values():
            out.extend(quotes_of(item))
    elif isinstance(value, list):
        for item in value:
            out.extend(quotes_of(item))
    return out


_DROPPED = " · fields dropped at version "


def mask_frame_lines(text: str, frame_id: str) -> str:
    """A compiled input's prompt text with the lines of frame `frame_id` masked: the body
    lines under its header (`  (key value)`, one per field) and the dropped fields its
    header names. Found by the header (`memory.timeline.render`), not by rendering the
    frame again: a stored input's map may list its keys in another order."""
    header = f"[frame {frame_id} r"
    lines = text.split("\n")
    inside = False
    for i, line in enumerate(lines):
        if line.startswith(header):
            inside = True
            at = line.find(_DROPPED)
            if at >= 0:
                names = line.index(": ", at) + 2
                lines[i] = line[:names] + mask_text(line[names:])
        elif inside and line.startswith("  ("):
            lines[i] = "  " + mask_text(line[2:])
        else:
            inside = False
    return "\n".join(lines)


# A payload's keys are a client's text (an appended event's payload, an action's arguments)
# or the runtime's schema (an action's `name` and `arguments`, a recall result), which
# replay reads and keeps.
def whole_payload(kind: str, payload: Any) -> Any:
    """An event's payload masked whole: keys too where they are a client's text."""
    if kind == ACTION and isinstance(payload, dict):
        return {key: mask_whole(item, keys=key == "arguments") for key, item in payload.items()}
    return mask_whole(payload, keys=kind in APPENDABLE_KINDS)


def payload_matches(kind: str, payload: Any, matcher: Matcher) -> tuple[Any, int]:
    """An event's payload with every occurrence masked (keys too where they are a
    client's text), and how many."""
    if kind == ACTION and isinstance(payload, dict):
        out: dict[str, Any] = {}
        total = 0
        for key, item in payload.items():
            out[key], n = mask_json(item, matcher, keys=key == "arguments")
            total += n
        return out, total
    return mask_json(payload, matcher, keys=kind in APPENDABLE_KINDS)
