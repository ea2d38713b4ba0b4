"""The base of pydantic models that are written to a JSON file and read back from it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class StoredModel(BaseModel):
    """Unknown keys are refused; a computed field (written for readers of the file, e.g.
    ``DropCounts.total``) is recomputed on read, so the stored value is ignored."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        computed = cls.model_computed_fields
        if computed and isinstance(data, dict) and any(k in data for k in computed):
            return {k: v for k, v in data.items() if k not in computed}
        return data
