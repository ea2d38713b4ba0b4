"""Run configuration: ``eval.yaml`` (omk-compatible keys) merged with command-line flags.

Every default comes from ``knowmeter.defaults``. ``EvalFile`` mirrors the file (unknown keys are errors, so
typos are caught); ``RunConfig`` is the resolved configuration a run records in ``run.json``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import ErrorDetails

from knowmeter import defaults
from knowmeter._folders import system_folder
from knowmeter._no_bool import annotation_types, refuse_bool_for_a_number
from knowmeter._secrets import REDACTED as REDACTED
from knowmeter._secrets import looks_secret, remember_named, scrub_value
from knowmeter._yaml import parse_yaml, read_user_text
from knowmeter.errors import InputError
from knowmeter.settings import bounds


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, v: Any, info: ValidationInfo) -> Any:
        """``repeat: true`` is refused like ``repeat: 2.5`` (pydantic would read true as 1)."""
        return refuse_bool_for_a_number(cls, v, info)


class BudgetFile(_Strict):
    totalUSD: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    perSampleUSD: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    perSampleMs: float | None = Field(default=None, gt=0)


class VariantFile(_Strict):
    name: str | None = None
    role: Literal["control", "treatment"] | None = None
    artifact: str
    cwd: str | None = None


class ExecutorFile(_Strict):
    name: str
    model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class GatesFile(_Strict):
    maxGapRate: float | None = Field(default=None, ge=0, le=1)
    gapRateRegression: float | None = Field(default=None, ge=0, le=1)
    layerGate: float | None = Field(default=None, ge=1, le=5)
    minEffect: float | None = Field(default=None, ge=0)
    maxMde: float | None = Field(default=None, gt=0)
    minPairs: int | None = Field(default=None, ge=2)
    stabilityLimit: float | None = Field(default=None, gt=0, le=1)


class HedgingClassifierFile(_Strict):
    enabled: bool = True
    judge: str | None = None  # executor:model
    maxCandidates: int = Field(default=defaults.HEDGING_MAX_CANDIDATES, ge=1)


class EvalFile(_Strict):
    """The keys ``eval.yaml`` may have (omk's, plus knowmeter's own)."""

    samples: str | list[str] | None = None
    variants: list[VariantFile] | None = None
    executor: str | ExecutorFile | None = None
    model: str | None = None
    concurrency: int | None = Field(default=None, ge=1, le=256)
    timeoutMs: float | None = Field(default=None, gt=0)
    budget: BudgetFile | None = None
    noCache: bool | None = None
    repeat: int | None = Field(default=None, ge=1, le=100)
    retry: int | None = Field(default=None, ge=0, le=10)
    seed: int | None = Field(default=None, ge=0)
    skillDir: str | None = None
    outputDir: str | None = None
    judge: str | list[str] | None = None
    judgeRepeat: int | None = Field(default=None, ge=1, le=20)
    lengthDebias: bool | None = None
    maxGradedOutputChars: int | None = Field(default=None, ge=1)
    knowledgeDirs: list[str] | None = None
    gates: GatesFile | None = None
    hedgingClassifier: HedgingClassifierFile | None = None
    bootstrapSamples: int | None = Field(default=None, ge=100)
    sequential: bool | None = None
    sequentialDesign: defaults.SequentialDesign | None = None
    futility: bool | None = None
    controlRun: str | None = None

    @property
    def sample_files(self) -> list[str]:
        """``samples`` as a list (one file may be given as a string)."""
        return [self.samples] if isinstance(self.samples, str) else list(self.samples or [])


def find_config(directory: Path) -> Path | None:
    """``eval.yaml`` (or ``eval.yml``) in ``directory``, None when there is none; one that is a
    folder, a named pipe or a device is refused in one line (it was passed over in silence, and
    the run then asked for variants the file would have given)."""
    for name in defaults.CONFIG_FILES:
        path = directory / name
        if path.is_file():
            return path
        if path.exists():
            raise InputError(f"{path}: a folder, a named pipe or a device where the config file is read; rename it")
    return None


def load_eval_file(path: Path) -> EvalFile:
    """Read and validate ``eval.yaml``; every problem is one line naming the file and the key."""
    data = parse_yaml(read_user_text(path, "config file"), path)
    if data is None:
        return EvalFile()
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    try:
        return EvalFile.model_validate(data)
    except ValidationError as exc:
        err = error_to_show(exc)
        loc, block = _located(err["loc"])
        if err["type"] == "extra_forbidden":
            raise InputError(f"{path}: {unknown_key(loc, block.model_fields, block=loc.rpartition('.')[0])}") from None
        raise InputError(f"{path}: {loc}: {err['msg']}") from None


def error_to_show(exc: ValidationError) -> ErrorDetails:
    """The problem to name first: an unknown key when there is one (it explains the others: a
    misspelt key leaves a required one missing, and a mapping given for ``executor: str | {…}``
    fails as a string too), else the first."""
    errors = exc.errors()
    return next((e for e in errors if e["type"] in UNKNOWN_KEY_ERRORS), errors[0])


#: pydantic's error types for a key the model does not have (a model's; a dataclass's)
UNKNOWN_KEY_ERRORS = ("extra_forbidden", "unexpected_keyword_argument")


def _located(loc: tuple[int | str, ...]) -> tuple[str, type[BaseModel]]:
    """The dotted key path of an eval.yaml error (a union member's name, which pydantic puts in
    the path, left out) and the model of the block holding its last key."""
    model: type[BaseModel] = EvalFile
    shown: list[str] = []
    for i, part in enumerate(loc):
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None and isinstance(part, str) and i < len(loc) - 1:
            continue  # a union member's name
        shown.append(str(part))
        if field is not None and i < len(loc) - 1:
            nested = [t for t in annotation_types(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
            model = nested[0] if nested else model
    return ".".join(shown), model


def unknown_key(loc: str, known: Iterable[str], *, block: str = "", what: str = "config key") -> str:
    """``unknown config key 'gates.layergate' (did you mean 'layerGate'?); known keys of gates:
    …``: the message for a key no model field has, with the keys of its block."""
    known = list(known)
    key = loc.rpartition(".")[2]
    close = difflib.get_close_matches(key.lower(), [k.lower() for k in known], n=1, cutoff=0.7)
    hint = f" (did you mean {next(k for k in known if k.lower() == close[0])!r}?)" if close else ""
    return f"unknown {what} {loc!r}{hint}; known keys{' of ' + block if block else ''}: {', '.join(known)}"


class VariantSpec(BaseModel):
    """A variant as configured (not yet resolved)."""

    name: str | None = None
    role: Literal["control", "treatment"]
    expression: str
    cwd: str | None = None


class RunConfig(BaseModel):
    """The resolved run configuration, recorded in ``run.json``."""

    model_config = ConfigDict(extra="forbid")

    base_dir: str
    samples: list[str]
    variants: list[VariantSpec]
    executor: str
    executor_options: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    concurrency: Annotated[int, bounds("concurrency")] = defaults.CONCURRENCY
    timeout_s: float = Field(default=defaults.TIMEOUT_S, gt=0)
    retry: Annotated[int, bounds("retry")] = defaults.RETRY
    repeat: Annotated[int, bounds("repeat")] = defaults.REPEAT
    no_cache: bool = False
    seed: Annotated[int, bounds("seed")] = defaults.SEED
    skill_dir: str = defaults.SKILL_DIR
    output_dir: str = defaults.OUTPUT_DIR
    budget_total_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    budget_per_task_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    budget_per_task_ms: float | None = Field(default=None, gt=0)
    judges: list[str] = Field(default_factory=list)
    judge_repeat: Annotated[int, bounds("judge_repeat")] = defaults.JUDGE_REPEAT
    length_debias: bool = defaults.LENGTH_DEBIAS
    max_graded_output_chars: int = Field(default=defaults.MAX_GRADED_OUTPUT_CHARS, ge=1)
    knowledge_dirs: list[str] = Field(default_factory=list)
    max_gap_rate: Annotated[float | None, bounds("max_gap_rate")] = None
    gap_rate_regression: Annotated[float | None, bounds("gap_rate_regression")] = None
    layer_gate: Annotated[float, bounds("threshold")] = defaults.LAYER_GATE
    min_effect: float = Field(default=defaults.MIN_EFFECT, ge=0)
    max_mde: Annotated[float, bounds("max_mde")] = defaults.MAX_MDE
    min_pairs: Annotated[int, bounds("min_pairs")] = defaults.MIN_PAIRS
    stability_limit: Annotated[float, bounds("stability_limit")] = defaults.STABILITY_LIMIT
    bootstrap_samples: Annotated[int, bounds("bootstrap_samples")] = defaults.BOOTSTRAP_SAMPLES
    hedging_judge: str | None = None
    hedging_max_candidates: int = defaults.HEDGING_MAX_CANDIDATES
    #: run agent CLIs without sealing tasks from each other (``--unsealed``)
    unsealed: bool = False
    #: ``I/N``: run only shard I of N of the plan (``--shard``; see ``knowmeter.runner.Shard``)
    shard: str | None = Field(default=None, pattern=r"^\d+/\d+$")
    #: run the samples in batches and stop when the answer is clear (``--sequential``)
    sequential: bool = False
    #: its design and whether a look may stop for futility (``--sequential-design``, ``--futility``)
    sequential_design: defaults.SequentialDesign = defaults.SEQUENTIAL_DESIGN
    futility: bool = defaults.FUTILITY
    #: a stored run whose control results stand in for this run's control (``--control-run``)
    control_run: str | None = None
    #: stop starting tasks when the first this many finished tasks failed the same way (0: never)
    max_errors: Annotated[int, bounds("max_errors")] = defaults.MAX_ERRORS
    #: run only these samples (``--sample``, in the file's order) and / or only the first ``limit``
    sample_ids: list[str] = Field(default_factory=list)
    limit: Annotated[int | None, bounds("limit")] = None

    @field_validator("knowledge_dirs")
    @classmethod
    def _no_system_folder(cls, dirs: list[str], info: ValidationInfo) -> list[str]:
        base = Path(str(info.data.get("base_dir") or "."))
        for d in dirs:
            real = system_folder(Path(d) if Path(d).is_absolute() else base / d)
            if real is not None:
                raise ValueError(f"{d!r} resolves to the system folder {real}; name the knowledge folder itself")
        return dirs

    def model_post_init(self, context: Any, /) -> None:
        # from now on its secrets are scrubbed by value from everything written (knowmeter._secrets)
        remember_named(
            {
                "executor_options": self.executor_options,
                "judges": self.judges,
                "hedging_judge": self.hedging_judge,
                "executor": self.executor,
            }
        )

    def base_path(self) -> Path:
        return Path(self.base_dir)

    def output_path(self) -> Path:
        p = Path(self.output_dir)
        return p if p.is_absolute() else self.base_path() / p


def first_error(exc: ValidationError) -> str:
    """``field.path: message`` of a validation error's first problem (without pydantic's
    ``Value error,`` in front of a validator's own message)."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def stored_config(data: Any, source: Path | str) -> RunConfig:
    """The ``config`` block of a stored ``run.json``; a damaged or edited one raises ``InputError``
    naming ``source`` and the field."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{source}: config.{first_error(exc)}; the file was edited or damaged") from None


def redact_secrets(value: Any) -> Any:
    """``value`` with every mapping entry whose name looks secret (``api_key``, ``key``, ``env``,
    ``*token*``, …) replaced by ``REDACTED`` (a mapping's values each, so its keys stay visible),
    and every secret found by value in its strings (``knowmeter._secrets.scrub``: a URL's
    userinfo, ``--token X`` in a command string, a remembered value)."""
    remember_named(value)
    return scrub_value(_redact_named(value))


def _redact_named(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                ({kk: REDACTED for kk in v} if isinstance(v, dict) else REDACTED)
                if looks_secret(k) and v is not None
                else _redact_named(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_named(v) for v in value]
    return value


def restore_secrets(config: RunConfig, source: str) -> RunConfig:
    """A stored config whose executor, executor options or judges were redacted gets them back
    from the project's ``eval.yaml`` (a resume needs the real key); ``InputError`` when it no
    longer has them."""
    texts = [config.executor, *config.judges, config.hedging_judge or ""]
    if REDACTED not in json.dumps([config.executor_options, texts]):
        return config
    path = find_config(config.base_path())
    ef = load_eval_file(path) if path is not None else EvalFile()
    where = path or "eval.yaml"
    current = ef.executor.options if isinstance(ef.executor, ExecutorFile) else {}
    remember_named({"executor_options": current})
    options = dict(config.executor_options)
    for key, value in options.items():
        if REDACTED in json.dumps(value):
            if key not in current:
                raise InputError(
                    f"{source}: executor option {key!r} was redacted when the run was stored and "
                    f"{where} no longer sets it; put it back to resume"
                )
            options[key] = current[key]
    named = [ef.judge] if isinstance(ef.judge, str) else list(ef.judge or [])
    named.append(ef.executor.name if isinstance(ef.executor, ExecutorFile) else str(ef.executor or ""))
    remember_named({"judges": named})
    by_stored = {redact_secrets(text): text for text in named}
    for text in texts:
        if REDACTED in text and text not in by_stored:
            raise InputError(
                f"{source}: {text!r} was redacted when the run was stored and {where} no longer names it "
                "(executor: / judge:); put it back to resume"
            )
    restored = config.model_copy()
    restored.executor_options = options
    restored.executor = by_stored.get(config.executor, config.executor)
    restored.judges = [by_stored.get(j, j) for j in config.judges]
    restored.hedging_judge = by_stored.get(config.hedging_judge or "", config.hedging_judge)
    return restored
