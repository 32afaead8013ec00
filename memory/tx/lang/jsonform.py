"""The JSON form: validation and normalisation, with errors naming the path (`ops[2].body`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, TypeAlias

from memory.limits import MAX_OPS
from memory.tx.lang.names import (
    MAX_BASE_VERSION,
    MAX_BODY_DEPTH,
    OPERATIONS,
    TX_KEYS,
    BodyValue,
    Transaction,
    TxValidationError,
    frame_id_problem,
    ref_problem,
    relation_name_problem,
    string_problem,
    thread_problem,
)

_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def _join(path: str, key: object) -> str:
    """Extend a JSON path: ``ops[2].body.goal``, or ``body["two words"]`` for odd keys."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    if isinstance(key, str) and _PLAIN_KEY_RE.match(key):
        return f"{path}.{key}" if path else key
    shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)
    return f"{path}[{shown}]"


def _expect_string(value: object, path: str, what: str) -> str:
    if not isinstance(value, str):
        raise TxValidationError(f"must be {what}, not {_json_type(value)}", path)
    problem = string_problem(value)
    if problem is not None:
        raise TxValidationError(problem, path)
    return value


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


_Problem: TypeAlias = Callable[[str], str | None]


def _checked_name(value: object, path: str, what: str, problem: _Problem) -> str:
    text = _expect_string(value, path, what)
    reason = problem(text)
    if reason is not None:
        raise TxValidationError(
            f"{json.dumps(text, ensure_ascii=False)} is not {what}: {reason}", path
        )
    return text


def _name_list(
    value: object, path: str, what: str, problem: _Problem, allow_empty: bool
) -> list[str]:
    if not isinstance(value, list | tuple):
        raise TxValidationError(f"must be a list of {what}s, not {_json_type(value)}", path)
    if not value and not allow_empty:
        raise TxValidationError(f"must list at least one {what}", path)
    return [
        _checked_name(item, _join(path, i), f"a {what}", problem) for i, item in enumerate(value)
    ]


def _check_keys(data: Mapping[Any, Any], allowed: Collection[str], path: str, what: str) -> None:
    for key in data:
        if key not in allowed:
            raise TxValidationError(
                f"unknown key {json.dumps(key) if isinstance(key, str) else repr(key)}; "
                f"{what} has the keys {', '.join(allowed)}",
                _join(path, key) if isinstance(key, str) else path,
            )


def _body_value(value: object, path: str, depth: int) -> BodyValue:
    """Check one body value whose lists and maps would sit at nesting `depth`."""
    if isinstance(value, str):
        return _expect_string(value, path, "a string")
    if isinstance(value, Mapping | list | tuple) and depth > MAX_BODY_DEPTH:
        raise TxValidationError(
            f"the body nests too deeply: at most {MAX_BODY_DEPTH} levels of maps and lists", path
        )
    if isinstance(value, Mapping):
        return _body_map(value, path, depth)
    if isinstance(value, list | tuple):
        return [_body_value(item, _join(path, i), depth + 1) for i, item in enumerate(value)]
    hint = ""
    if isinstance(value, bool | int | float) or value is None:
        hint = f'; write it as the string "{json.dumps(value)}"'
    raise TxValidationError(
        f"body values are strings, lists or maps, not {_json_type(value)}{hint}", path
    )


def _body_map(value: Mapping[Any, Any], path: str, depth: int) -> dict[str, BodyValue]:
    result: dict[str, BodyValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TxValidationError(f"field names are strings, not {_json_type(key)}", path)
        key_path = _join(path, key)
        if not key:
            raise TxValidationError("a field name cannot be empty", key_path)
        _expect_string(key, key_path, "a string")
        if depth == 1 and key == "from":
            raise TxValidationError(
                '"from" is reserved at the top of a body: put sources in the operation\'s "from"',
                key_path,
            )
        result[key] = _body_value(item, key_path, depth + 1)
    return result


def _validate_op(op: object, path: str) -> dict[str, Any]:
    if not isinstance(op, Mapping):
        raise TxValidationError(f"an operation must be an object, not {_json_type(op)}", path)
    name = op.get("op")
    if not isinstance(name, str) or name not in OPERATIONS:
        if "op" not in op:
            found = "nothing"
        elif isinstance(name, str):
            found = json.dumps(name, ensure_ascii=False)
        else:
            found = _json_type(name)
        raise TxValidationError(
            f"expected one of {', '.join(OPERATIONS)}; found {found}", _join(path, "op")
        )
    keys = OPERATIONS[name]
    _check_keys(op, ("op", *keys), path, f"a {name} operation")
    for key in keys:
        if key not in op and key != "from":
            raise TxValidationError(f"missing; a {name} operation needs it", _join(path, key))
    if name in ("derive", "revise"):
        body = op["body"]
        if not isinstance(body, Mapping):
            raise TxValidationError(
                f"must be an object (the frame's fields), not {_json_type(body)}",
                _join(path, "body"),
            )
        return {
            "op": name,
            "id": _checked_name(op["id"], _join(path, "id"), "a frame id", frame_id_problem),
            "from": _name_list(op.get("from", []), _join(path, "from"), "ref", ref_problem, True),
            "body": _body_map(body, _join(path, "body"), 1),
        }
    if name in ("relate", "unrelate"):
        return {
            "op": name,
            "subject": _checked_name(
                op["subject"], _join(path, "subject"), "a frame id", frame_id_problem
            ),
            "name": _checked_name(
                op["name"], _join(path, "name"), "a relation name", relation_name_problem
            ),
            "object": _checked_name(
                op["object"], _join(path, "object"), "a frame id", frame_id_problem
            ),
        }
    if name == "retire":
        refs = _name_list(op["refs"], _join(path, "refs"), "ref", ref_problem, False)
        return {"op": name, "refs": refs}
    problem = frame_id_problem if name in ("protect", "unprotect") else ref_problem
    what = "frame id" if name in ("protect", "unprotect") else "ref"
    return {"op": name, "ids": _name_list(op["ids"], _join(path, "ids"), what, problem, False)}


def validate_json(data: object, *, ignore_keys: Collection[str] = ()) -> Transaction:
    """Check a JSON-form transaction and return a normalised copy with defaults filled in.

    `ignore_keys` names top-level keys that belong to the request rather than the transaction
    (e.g. ``{"evaluation"}``); they are dropped instead of refused.
    Raises `TxValidationError` naming the path of the first problem.
    """
    if not isinstance(data, Mapping):
        raise TxValidationError(
            f'a transaction must be an object with "ops", not {_json_type(data)}', ""
        )
    _check_keys(
        data,
        (*TX_KEYS, *ignore_keys),
        "",
        "a transaction",
    )
    base_version = data.get("base_version")
    if base_version is not None and (
        isinstance(base_version, bool)
        or not isinstance(base_version, int)
        or not 0 <= base_version <= MAX_BASE_VERSION
    ):
        raise TxValidationError(
            f"must be a non-negative integer or null, not {_json_type(base_version)}",
            "base_version",
        )
    reason = data.get("reason")
    if reason is not None:
        _expect_string(reason, "reason", "a string or null")
    thread = data.get("thread")
    if thread is not None:
        _checked_name(thread, "thread", "a thread name", thread_problem)
    if "ops" not in data:
        raise TxValidationError("missing; a transaction needs at least one operation", "ops")
    ops = data["ops"]
    if not isinstance(ops, list | tuple):
        raise TxValidationError(f"must be a list of operations, not {_json_type(ops)}", "ops")
    if not ops:
        raise TxValidationError("a transaction needs at least one operation", "ops")
    if len(ops) > MAX_OPS:
        # Before any operation is checked: a 20,000-operation request is refused at once.
        raise TxValidationError(f"a transaction may hold at most {MAX_OPS} operations", "ops")
    return {
        "base_version": base_version,
        "reason": reason,
        "thread": thread,
        "ops": [_validate_op(op, _join("ops", i)) for i, op in enumerate(ops)],
    }
