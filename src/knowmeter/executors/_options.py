"""Executor options: typed, validated, with one-line errors for typos (``extra="forbid"``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from knowmeter.errors import InputError

__all__ = ["ExecutorOptions", "options_hash", "parse_options"]


class ExecutorOptions(BaseModel):
    """Base of every executor's options: unknown keys are an error (typos are caught)."""

    model_config = ConfigDict(extra="forbid")


OptionsT = TypeVar("OptionsT", bound=ExecutorOptions)


def parse_options(cls: type[OptionsT], executor: str, options: Mapping[str, Any]) -> OptionsT:
    """Validate ``options`` (from eval.yaml / the command line) or raise a one-line InputError."""
    try:
        return cls.model_validate(dict(options))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(options)"
        valid = ", ".join(sorted(cls.model_fields))
        raise InputError(f"executor {executor!r}: option {where}: {err['msg']}; valid options: {valid}") from None


def options_hash(options: BaseModel) -> str:
    """A short hash of the options that can change answers (for ``identity()``): credentials,
    the binary path, the timeout and debugging switches are left out."""
    data = options.model_dump(mode="json", exclude={"bin", "api_key", "keep_temp", "timeout_s"})
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
