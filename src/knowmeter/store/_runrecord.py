"""The shape of a stored ``run.json``: every field a reader relies on, checked once on read, so
an edited or damaged file is one line naming the field — never a KeyError deep in a command."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowmeter.errors import InputError
from knowmeter.watermark import Watermark


def utc_timestamp() -> str:
    """Now, as run.json and the results lines record it: UTC, ISO 8601 to the millisecond, so two
    runs started within one second still sort in the order they started."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def resume_command(run_id: str, *, comprehension: bool) -> str:
    """The command that finishes a stored run: a comprehension run is resumed by ``comprehend``
    (``eval --resume`` would run it too, but print an eval's summary)."""
    return f"knowmeter {'comprehend' if comprehension else 'eval'} --resume {run_id}"


#: The version of run.json (and of the results.jsonl lines beside it) this code writes and reads.
#: 1: knowmeter 0.1.0, whose run.json lacks fields ``StoredRun`` requires; 2: checked on read.
RUN_SCHEMA_VERSION = 2


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Variant(_Open):
    name: str
    role: Literal["control", "treatment"]
    expression: str
    kind: str
    hash: str
    files: int | None = Field(default=None, ge=0)
    path: str | None = None
    cwd: str | None = None
    cwd_hash: str | None = None


class _Executor(_Open):
    name: str
    identity: str
    non_llm: bool
    model: str | None = None
    sealed: bool | None = None


class _Git(_Open):
    commit: str | None
    dirty: bool | None


class _Shard(_Open):
    index: int = Field(ge=1)
    count: int = Field(ge=1)
    plan_hash: str
    plan_tasks: int = Field(ge=0)


class StoredRun(_Open):
    """``run.json`` as written by ``knowmeter eval``."""

    run_id: str
    created_at: str
    status: str | None = None
    finished_at: str | None = None
    versions: dict[str, str]
    git: _Git
    config: dict[str, Any]
    seed: int = Field(ge=0)
    watermark: Watermark
    executor: _Executor
    variants: list[_Variant] = Field(min_length=1)
    tasks_total: int = Field(ge=0)
    judges: list[dict[str, Any]] = Field(default_factory=list)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    budget: dict[str, Any] | None = None
    wall_s: float | None = Field(default=None, ge=0)
    shard: _Shard | None = None


def check_run_record(data: Any, source: str) -> dict[str, Any]:
    """``data`` when it has the shape of a run.json (its config included), else ``InputError``."""
    from knowmeter.config import first_error, stored_config

    if not isinstance(data, dict):
        raise InputError(f"{source}: not a run record (expected a JSON object); the file was edited or damaged")
    check_schema_version(
        data,
        RUN_SCHEMA_VERSION,
        source,
        older="read it with the knowmeter version that wrote it, or run knowmeter eval again",
    )
    try:
        StoredRun.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{source}: {first_error(exc)}; the file was edited or damaged") from None
    stored_config(data["config"], source)
    return data


#: Settings that do not change any task's result and may differ between the shards of one plan:
#: where the project and the store lie on each machine, how many tasks run at once, the budget
#: of each job, and which shard this is.
LOCAL_SETTINGS = frozenset({"base_dir", "output_dir", "concurrency", "budget_total_usd", "shard", "max_errors"})


def plan_parts(record: dict[str, Any]) -> dict[str, Any]:
    """What a run's plan hash covers: the stored (secret-redacted) config without
    ``LOCAL_SETTINGS``, the sample set's sha256 (its watermark), each variant's name, role and
    artifact hash, the executor's identity, and the seed."""
    config = {k: v for k, v in record["config"].items() if k not in LOCAL_SETTINGS}
    return {
        "config": config,
        "samples": record["watermark"]["sha256"],
        "variants": [[v["name"], v["role"], v["hash"]] for v in record["variants"]],
        "executor": record["executor"]["identity"],
        "seed": record["seed"],
    }


def plan_hash(record: dict[str, Any]) -> str:
    """sha256 (hex) of ``plan_parts`` as canonical JSON (sorted keys, no whitespace, UTF-8):
    equal for every shard of one plan, different when any part differs."""
    canonical = json.dumps(plan_parts(record), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_schema_version(data: dict[str, Any], current: int, source: str, *, older: str) -> None:
    """``InputError`` unless ``data["schema_version"]`` is ``current``: a file from an older
    knowmeter says ``older`` (what to do with it), one from a newer knowmeter says to upgrade."""
    version = data.get("schema_version")
    if version == current and type(version) is int:
        return
    wrote = data.get("versions", data.get("run", {}).get("versions") if isinstance(data.get("run"), dict) else None)
    by = f" (written by knowmeter {wrote['knowmeter']})" if isinstance(wrote, dict) and "knowmeter" in wrote else ""
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError(f"{source}: no valid schema_version (got {version!r}); the file was edited or damaged")
    if version < current:
        raise InputError(f"{source}: schema_version {version} is older than this knowmeter's {current}{by}: {older}")
    raise InputError(
        f"{source}: schema_version {version} is newer than this knowmeter's {current}{by}: "
        "upgrade knowmeter (pip install -U knowmeter) to read it"
    )
