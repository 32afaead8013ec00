"""Screening on write (R65): secrets and card numbers in written text, refused or masked.

How it works: docs/internals.md, section `memory/screening.py`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, cast

from memory.erasure.mask import Matcher, mask_json
from memory.errors import ErrorCode, MorphzError
from memory.kinds import SCREENING_MASK, SCREENING_OFF, SCREENING_REFUSE
from memory.shapes.screening import ScreeningNote

PLUGINS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "PrivateKeyDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "SlackDetector",
    "StripeDetector",
    "JwtTokenDetector",
    "OpenAIDetector",
    "SendGridDetector",
    "TwilioKeyDetector",
    "DiscordBotTokenDetector",
    "NpmDetector",
    "PypiTokenDetector",
    "TelegramBotTokenDetector",
)
CARD_KIND = "Card number"
_CARD = re.compile(r"(?<![\d])(?:\d[ \-]?){12,18}\d(?![\d])")


class SecretDetected(MorphzError):
    """422: the context refuses writes holding secrets or card numbers."""

    code = ErrorCode.SECRET_DETECTED


@dataclass(frozen=True)
class Finding:
    kind: str
    value: str


class Screened(NamedTuple):
    """Written fields as they may be stored (by the caller's names), a note per finding."""

    fields: dict[str, Any]
    notes: list[ScreeningNote]


# A transaction's JSON form as the client wrote it: screening keeps its keys.
WrittenTx = TypeVar("WrittenTx", bound=Mapping[str, Any])


def luhn(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (card numbers do)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str) -> list[Finding]:
    out = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"[ \-]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn(digits):
            out.append(Finding(CARD_KIND, match.group()))
    return out


def _secrets(text: str) -> list[Finding]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    out = []
    with transient_settings({"plugins_used": [{"name": name} for name in PLUGINS]}):
        for line in text.splitlines():
            for secret in scan_line(line):
                if secret.secret_value:
                    out.append(Finding(secret.type, secret.secret_value))
    return out


def findings(text: str) -> list[Finding]:
    """Every secret and card number in `text`."""
    if not text:
        return []
    return _secrets(text) + _cards(text)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def screen(mode: str, fields: dict[str, Any]) -> Screened:
    """The fields as they may be stored, and a note per finding `{field, kind}`. Raises
    SecretDetected in `refuse` mode when anything is found."""
    if mode == SCREENING_OFF:
        return Screened(fields, [])
    found: dict[str, list[Finding]] = {}
    for name, value in fields.items():
        hits = [f for text in _strings(value) for f in findings(text)]
        if hits:
            found[name] = hits
    notes: list[ScreeningNote] = [
        {"field": name, "kind": f.kind} for name, hits in found.items() for f in hits
    ]
    if not found:
        return Screened(fields, [])
    if mode == SCREENING_REFUSE:
        kinds = sorted({n["kind"] for n in notes})
        raise SecretDetected(
            f"{', '.join(sorted(found))}: holds {' and '.join(kinds)}; this context refuses "
            "secrets and card numbers (nothing was written)",
            details=notes,
        )
    assert mode == SCREENING_MASK
    matcher = Matcher(f.value for hits in found.values() for f in hits)
    masked = {name: mask_json(value, matcher)[0] for name, value in fields.items()}
    return Screened(masked, notes)


def noted_payload(payload: Any, notes: list[ScreeningNote]) -> Any:
    """An event's payload with the screening note (a payload that is not a map is kept
    under `payload`)."""
    if not notes:
        return payload
    if payload is None:
        return {"screened": notes}
    if isinstance(payload, dict):
        return {**payload, "screened": notes}
    return {"payload": payload, "screened": notes}


def screen_transaction_text(mode: str, text: str) -> str:
    """A transaction's text screened: refused, or its strings masked through the language
    (it stays canonical); a text that does not parse is left to the engine's refusal."""
    from memory.tx import lang as txlang

    if mode == SCREENING_OFF:
        return text
    try:
        tx = txlang.parse_text(text)
    except txlang.TxError:
        return text
    out, notes = screen(mode, {"text": {"reason": tx.get("reason"), "ops": tx["ops"]}})
    if not notes:
        return text
    masked = out["text"]
    return txlang.to_text({**tx, "reason": masked["reason"], "ops": masked["ops"]})


def screen_transaction_json(mode: str, tx: WrittenTx) -> WrittenTx:
    """A JSON-form transaction screened: refused (fields `ops`, `reason`), or its strings
    masked."""
    if mode == SCREENING_OFF:
        return tx
    fields: dict[str, Any] = {key: tx[key] for key in ("ops", "reason") if key in tx}
    screened, _notes = screen(mode, fields)
    return cast(WrittenTx, {**tx, **screened})
