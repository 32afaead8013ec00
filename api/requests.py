"""Request models (`memory.requests`) at the API's edge: validating bodies and query strings,
and describing them in the OpenAPI schema.

A refusal is the domain's own error (`memory.requests.refusals`), answered by the API's one
error shape with its code and status. The schema of a model is pydantic's JSON schema in
OpenAPI 3.0's words (`nullable` rather than a union with null; no titles).
"""

from __future__ import annotations

from typing import Any, TypeVar

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from api.errors import ApiError
from memory.errors import ErrorCode
from memory.requests.refusals import refusal

M = TypeVar("M", bound=BaseModel)
_INT32_MAX = 2**31 - 1


def body(model: type[M], data: Any) -> M:
    """A JSON body validated by `model`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise refusal(exc) from None


def query(model: type[M], params: Any) -> M:
    """Query parameters (a QueryDict) validated by `model`; a parameter given twice is refused
    (`invalid_request`): which of the two values was meant cannot be known."""
    repeated = sorted(key for key in params if len(params.getlist(key)) > 1)
    if repeated:
        raise ApiError(
            ErrorCode.INVALID_REQUEST,
            f"query parameter {repeated[0]!r} is given more than once; send it once",
            [{"field": key, "reason": "repeated"} for key in repeated],
        )
    return body(model, {key: params.get(key) for key in params})


class OpenApi30(GenerateJsonSchema):
    """Pydantic's JSON schema as OpenAPI 3.0 writes it."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def int_schema(self, schema: core_schema.IntSchema) -> JsonSchemaValue:
        out = super().int_schema(schema)
        if out.get("maximum", 0) > _INT32_MAX:
            out["format"] = "int64"
        return out

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if out.get("default", 0) is None:  # optional, not a value a client sends
            del out["default"]
        return out


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s schema, its nested models in `$defs` referred to as OpenAPI components."""
    schema = model.model_json_schema(
        ref_template="#/components/schemas/{model}Request", schema_generator=OpenApi30
    )
    for each in (schema, *schema.get("$defs", {}).values()):
        each.pop("title", None)
        if "required" in each:
            each["required"] = sorted(each["required"])
        for prop in each.get("properties", {}).values():
            _in_openapi_words(prop)
    return schema


_BOUNDS = {"ge": "minimum", "le": "maximum"}


def _in_openapi_words(prop: dict[str, Any]) -> None:
    """Bounds of an optional number (pydantic writes them as `ge`, `le` beside the union)
    as `minimum`, `maximum`; an enum's values listed in its description."""
    for short, word in _BOUNDS.items():
        if short in prop:
            prop[word] = prop.pop(short)
    if prop.get("type") == "integer" and prop.get("maximum", 0) > _INT32_MAX:
        prop["format"] = "int64"
    if "enum" in prop:
        choices = "\n".join(f"* `{value}` - {value}" for value in prop["enum"])
        described = prop.get("description")
        prop["description"] = f"{described}\n\n{choices}" if described else choices


class RequestModelExtension(OpenApiSerializerExtension):
    """`extend_schema(request=Model)` for the request models: a component named after the
    model (`EventAppendInRequest`), its nested models as components of their own."""

    target_class = "memory.requests.model.StrictModel"
    match_subclasses = True
    priority = 1  # ahead of drf_spectacular.contrib.pydantic

    def get_name(self, auto_schema: Any, direction: str) -> str:
        return str(self.target.__name__)

    def map_serializer(self, auto_schema: Any, direction: str) -> Any:
        schema = model_schema(self.target)
        models = _nested_models(self.target)
        for name, nested in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=f"{name}Request",
                type=ResolvedComponent.SCHEMA,
                object=models.get(name, name),  # the identity a direct use registers
                schema=nested,
            )
            auto_schema.registry.register_on_missing(component)
        return schema


def _nested_models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The models `model`'s fields hold, however deep, by name."""
    found: dict[str, type[BaseModel]] = {}
    stack: list[Any] = [field.annotation for field in model.model_fields.values()]
    while stack:
        kind = stack.pop()
        is_model = isinstance(kind, type) and issubclass(kind, BaseModel)
        if is_model and kind.__name__ not in found:
            found[kind.__name__] = kind
            stack.extend(field.annotation for field in kind.model_fields.values())
        stack.extend(getattr(kind, "__args__", ()))
    return found


def query_parameters(model: type[BaseModel]) -> list[OpenApiParameter]:
    """`model`'s fields as the query parameters of an operation."""
    schema = model_schema(model)
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema["properties"].items():
        prop = dict(prop)
        prop.pop("nullable", None)  # a query string holds text: absent, never null
        description = prop.pop("description", "")
        out.append(
            OpenApiParameter(
                name,
                prop,
                OpenApiParameter.QUERY,
                required=name in required,
                description=description,
            )
        )
    return out
