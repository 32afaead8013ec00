"""Model fields Morphz needs beyond Django's own."""

from __future__ import annotations

import json
from typing import Any

from django.db import models


class OrderedJSONField(models.Field):
    """JSON stored in PostgreSQL's `json` type, which keeps object keys in written order.

    Frame bodies are ordered maps written by the model (R4); `jsonb` would sort their keys.
    """

    description = "JSON that keeps object key order"

    def db_type(self, connection: Any) -> str:
        return "json"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is None or not isinstance(value, str):
            return value  # psycopg already decoded `json` (json.loads keeps key order)
        return json.loads(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    def get_prep_value(self, value: Any) -> Any:
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def value_to_string(self, obj: Any) -> str:
        return json.dumps(self.value_from_object(obj), ensure_ascii=False)
