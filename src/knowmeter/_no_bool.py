"""``true`` / ``false`` where a user file wants a number is refused, as the JSON Schemas refuse it
(pydantic's lax mode would read ``true`` as 1): eval.yaml's models and the assertion types share
this check."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ValidationInfo
from pydantic_core import PydanticCustomError


def annotation_types(annotation: Any) -> list[Any]:
    """``annotation`` and every type inside it (``list[X] | None`` → X among them)."""
    return [annotation, *(t for arg in get_args(annotation) for t in annotation_types(arg))]


def refuse_bool_for_a_number(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """``value`` unchanged, unless it is a bool given to a field of ``model`` that takes a number
    and no bool: then the error pydantic gives ``2.5`` for an integer, or ``"x"`` for a number."""
    if isinstance(value, bool) and info.field_name is not None:
        types = annotation_types(model.model_fields[info.field_name].annotation)
        if bool not in types and (int in types or float in types):
            kind = "integer" if int in types else "number"
            raise PydanticCustomError(f"{kind}_type", f"Input should be a valid {kind}")
    return value
