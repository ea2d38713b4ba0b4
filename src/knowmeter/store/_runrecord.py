"""``run.json`` as one typed model, ``RunRecord``: checked once on read (``RunDir.read_run``), so
an edited or damaged file is one line naming the field — never a KeyError deep in a command —
and read and changed by attribute everywhere after, so a renamed field fails mypy where it is
used. Its blocks are the ones report.json shows (``ShardInfo``, ``BudgetStatus`` …): one
definition each."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowmeter._looks import SequentialRecord
from knowmeter.config import RunConfig, first_error
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
#: 1: knowmeter 0.1.0, whose run.json lacks fields ``RunRecord`` requires; 2: checked on read.
#: Within version 2 the stored form only grew optional blocks (``shard``, ``subset``,
#: ``halted``, ``control_reused``, ``activation``, variants' ``cwd_hash`` …): a file without one
#: reads as it always meant (None, or the field's default) and is written back without it.
RUN_SCHEMA_VERSION = 2


class _Stored(BaseModel):
    """A block of run.json: every key known (an unknown one is an edit), types checked strictly."""

    model_config = ConfigDict(extra="forbid", strict=True)


class RunVariant(_Stored):
    """One variant as it ran: its role, artifact and the workspace its agent worked in."""

    name: str
    role: Literal["control", "treatment"]
    expression: str
    kind: str
    hash: str
    files: int | None = Field(default=None, ge=0)
    path: str | None = None
    cwd: str | None = None
    #: the workspace's content (``directory_fingerprint``); None: no workspace, or a run stored before it
    cwd_hash: str | None = None


class RunExecutor(_Stored):
    name: str
    identity: str
    non_llm: bool
    model: str | None = None
    #: True: each task's agent was sealed from the others; False: run with --unsealed;
    #: None: the executor runs no agent process of its own (offline, script, model APIs)
    sealed: bool | None = None


class Git(_Stored):
    commit: str | None
    dirty: bool | None


class ShardInfo(_Stored):
    """Which shard of which plan a run is."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    plan_hash: str = Field(description="sha256 of the plan (config, samples, variants, executor, seed).")
    plan_tasks: int = Field(ge=0, description="Tasks of the whole plan (all shards).")


class JudgeInfo(_Stored):
    name: str
    executor: str
    model: str | None


class SampleSetInfo(_Stored):
    """What kind of sample set the watermark names: written by people, made by knowmeter probe,
    or a mix (gap-signal spec §9: the two gap rates are shown side by side, never merged)."""

    kind: Literal["human", "probe", "mixed"]
    probe_samples: int
    generators: list[str]
    prompt_hashes: list[str]
    kb_sha256: list[str] = Field(description="Hashes of the knowledge bases the probe questions were made from.")


class SubsetInfo(_Stored):
    """The part of the sample set a debugging run ran (eval --limit N / --sample ID)."""

    samples: int = Field(ge=0, description="Samples run.")
    of: int = Field(ge=0, description="Samples in the sample files.")
    sample_ids: list[str] = Field(description="The --sample ids asked for (empty: none).")
    limit: int | None = Field(description="The --limit asked for (None: none).")


class CallSpend(_Stored):
    known_cost: int
    unknown_cost: int
    spent_known_usd: float
    max_cost_usd: float | None = Field(
        default=None, description="The highest cost one call reported (None: none reported one)."
    )


class BudgetStatus(_Stored):
    """What the run spent against its budget (``runner.Budget.record``; summed over a resumed
    run's legs)."""

    total_usd: float | None
    per_task_usd: float | None
    spent_known_usd: float
    tasks_with_known_cost: int
    tasks_with_unknown_cost: int
    tasks_not_started_for_budget: int
    calls: dict[str, CallSpend] = Field(description="Model calls by kind (agent, judge, hedging, grader).")
    calls_one_at_a_time: int = Field(
        default=0,
        ge=0,
        description="Calls the budget ran one at a time because a cost it needed to size their "
        "reservation was not known yet (every call, when the executor never reports its cost).",
    )
    in_flight_calls: int = Field(
        default=0, ge=0, description="Calls in flight when a leg of the run was killed, charged by a later leg."
    )
    in_flight_charged_usd: float = Field(
        default=0.0,
        ge=0,
        description="What those calls were charged: their reservations (their real cost is unknown).",
    )
    in_flight_unknown_cost: int = Field(
        default=0,
        ge=0,
        description="Of those calls, the ones charged nothing: no reservation and no known cost of their kind.",
    )
    overshoot_usd: float | None
    note: str | None


class ControlReused(_Stored):
    run: str = Field(description="The run the control arm's results were taken from.")
    created_at: str = Field(description="When that run was made.")
    tasks: int = Field(ge=0, description="Control tasks reused.")


class RunHalted(_Stored):
    """Why the last leg stopped before its tasks were all started (``--max-errors``)."""

    reason: str
    tasks_not_started: int = Field(ge=0)


class MergedShard(_Stored):
    """One shard a merged run (``knowmeter merge``) was made from."""

    run_id: str
    shard: str
    status: str | None
    created_at: str
    finished_at: str | None
    tasks_total: int = Field(ge=0)
    wall_s: float | None
    budget: BudgetStatus | None
    git: Git


class ComprehensionTarget(_Stored):
    """What a comprehension run measures (``comprehension.Target``)."""

    skill: str
    evals: str | None
    ngram: int
    cwd: str | None = None
    flags: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ComprehensionSkill(_Stored):
    name: str
    path: str
    shape: str
    audit_state: str | None


class CaseFileInfo(_Stored):
    path: str
    format: str


class Grader(_Stored):
    name: str
    executor: str
    model: str | None
    non_llm: bool


class RunComprehension(_Stored):
    """The ``comprehension`` block: what a comprehension run measured and who graded."""

    target: ComprehensionTarget
    skill: ComprehensionSkill
    eval_file: CaseFileInfo
    cases: int = Field(ge=0)
    #: None: a run stored before the eval file's dimensions were recorded
    dimensions: list[str] | None = None
    notes: list[str]
    flags: list[str] = Field(default_factory=list)
    grader_prompt_hash: str
    graders: list[Grader]


class ActivationTarget(_Stored):
    """What an activation run measures (``activation.Target``)."""

    skill: str
    case_files: list[str]
    against: str | None
    description: str | None
    skills_dirs: list[str]
    distractors: list[str] = Field(default_factory=list)
    counts: Literal["skill-tool", "read", "either"]
    split: bool


class StoredActivationCase(_Stored):
    case_id: str
    prompt: str
    should_trigger: bool
    distractors: list[str]
    expected_winner: str | None = None


class RunActivation(_Stored):
    """The ``activation`` block: the skill, its cases and where they came from."""

    target: ActivationTarget
    skill: str
    case_files: list[CaseFileInfo]
    notes: list[str] = Field(default_factory=list)
    cases: dict[str, StoredActivationCase]


class RunRecord(_Stored):
    """``run.json``: what a run planned (its configuration, samples, variants, executor, seed) and
    what became of it (status, times, budget, halt, looks). Read once at ``RunDir.read_run`` and
    written back with ``stored()``: the keys the file had (or a writer set), nothing added."""

    schema_version: int
    run_id: str
    created_at: str
    status: str | None = None
    finished_at: str | None = None
    versions: dict[str, str]
    git: Git
    #: the run's configuration, secrets redacted (``config.redact_secrets``)
    config: RunConfig
    seed: int = Field(ge=0)
    watermark: Watermark
    #: None: a run stored before sample sets had a kind (its samples were written by people)
    sample_set: SampleSetInfo | None = None
    executor: RunExecutor
    variants: list[RunVariant] = Field(min_length=1)
    tasks_total: int = Field(ge=0)
    judges: list[JudgeInfo] = Field(default_factory=list)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    subset: SubsetInfo | None = None
    shard: ShardInfo | None = None
    budget: BudgetStatus | None = None
    wall_s: float | None = Field(default=None, ge=0)
    halted: RunHalted | None = None
    sequential: SequentialRecord | None = None
    control_reused: ControlReused | None = None
    comprehension: RunComprehension | None = None
    activation: RunActivation | None = None
    #: a merged run's shards and the plan hash they share (``knowmeter merge``)
    merged_from: list[MergedShard] | None = None
    plan_hash: str | None = None

    def stored(self) -> dict[str, Any]:
        """The JSON form to write: the keys read or set, so an older file is written back as it
        was. The looks are written whole (a look is appended to them in place)."""
        data = self.model_dump(mode="json", exclude_unset=True)
        if self.sequential is not None:
            data["sequential"] = self.sequential.model_dump(mode="json")
        return data

    def unset(self, name: str) -> None:
        """Set the field ``name`` to None and leave its key out of the stored form."""
        setattr(self, name, None)
        self.model_fields_set.discard(name)

    def variant(self, name: str) -> RunVariant:
        """The variant called ``name`` (``KeyError`` when the run has none)."""
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def control(self) -> RunVariant | None:
        return next((v for v in self.variants if v.role == "control"), None)


def check_run_record(data: Any, source: str) -> RunRecord:
    """``data`` as a ``RunRecord`` when it has the shape of a run.json (its config included),
    else ``InputError``: one line naming ``source`` and the field."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: not a run record (expected a JSON object); the file was edited or damaged")
    check_schema_version(
        data,
        RUN_SCHEMA_VERSION,
        source,
        older="read it with the knowmeter version that wrote it, or run knowmeter eval again",
    )
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{source}: {first_error(exc)}; the file was edited or damaged") from None


#: Settings that do not change any task's result and may differ between the shards of one plan:
#: where the project and the store lie on each machine, how many tasks run at once, the budget
#: of each job, and which shard this is.
LOCAL_SETTINGS = frozenset({"base_dir", "output_dir", "concurrency", "budget_total_usd", "shard", "max_errors"})


def plan_parts(record: RunRecord) -> dict[str, object]:
    """What a run's plan hash covers: the stored (secret-redacted) config without
    ``LOCAL_SETTINGS`` (its keys as stored), the sample set's sha256 (its watermark), each
    variant's name, role and artifact hash, the executor's identity, and the seed."""
    stored = record.config.model_dump(mode="json", exclude_unset=True, exclude=set(LOCAL_SETTINGS))
    return {
        "config": stored,
        "samples": record.watermark.sha256,
        "variants": [[v.name, v.role, v.hash] for v in record.variants],
        "executor": record.executor.identity,
        "seed": record.seed,
    }


def plan_hash(record: RunRecord) -> str:
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
