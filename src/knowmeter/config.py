"""Run configuration: ``eval.yaml`` (omk-compatible keys) merged with command-line flags.

Defaults live here and nowhere else. ``EvalFile`` mirrors the file (unknown keys are errors, so
typos are caught); ``RunConfig`` is the resolved configuration a run records in ``run.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowmeter._yaml import parse_yaml
from knowmeter.errors import InputError

DEFAULT_CONFIG_FILES = ("eval.yaml", "eval.yml")
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_RETRY = 2
DEFAULT_SEED = 20260413
DEFAULT_SKILL_DIR = "skills"
DEFAULT_OUTPUT_DIR = ".knowmeter"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class BudgetFile(_Strict):
    totalUSD: float | None = Field(default=None, ge=0)
    perSampleUSD: float | None = Field(default=None, ge=0)
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


class HedgingClassifierFile(_Strict):
    enabled: bool = True
    judge: str | None = None  # executor:model
    maxCandidates: int = Field(default=50, ge=1)


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
    seed: int | None = None
    skillDir: str | None = None
    outputDir: str | None = None
    judge: str | list[str] | None = None
    judgeRepeat: int | None = Field(default=None, ge=1, le=20)
    lengthDebias: bool | None = None
    knowledgeDirs: list[str] | None = None
    gates: GatesFile | None = None
    hedgingClassifier: HedgingClassifierFile | None = None
    bootstrapSamples: int | None = Field(default=None, ge=100)


def find_config(directory: Path) -> Path | None:
    for name in DEFAULT_CONFIG_FILES:
        if (directory / name).is_file():
            return directory / name
    return None


def load_eval_file(path: Path) -> EvalFile:
    """Read and validate ``eval.yaml``; every problem is one line naming the file and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: config file not found") from None
    data = parse_yaml(text, path)
    if data is None:
        return EvalFile()
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    try:
        return EvalFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            known = ", ".join(EvalFile.model_fields)
            raise InputError(f"{path}: unknown config key {loc!r}; known keys: {known}") from None
        raise InputError(f"{path}: {loc}: {err['msg']}") from None


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
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    retry: int = DEFAULT_RETRY
    repeat: int = 1
    no_cache: bool = False
    seed: int = DEFAULT_SEED
    skill_dir: str = DEFAULT_SKILL_DIR
    output_dir: str = DEFAULT_OUTPUT_DIR
    budget_total_usd: float | None = None
    budget_per_task_usd: float | None = None
    budget_per_task_ms: float | None = None
    judges: list[str] = Field(default_factory=list)
    judge_repeat: int = 1
    length_debias: bool = True
    knowledge_dirs: list[str] = Field(default_factory=list)
    max_gap_rate: float | None = None
    gap_rate_regression: float | None = None
    layer_gate: float = 3.5
    min_effect: float = 0.1
    bootstrap_samples: int = 10_000
    hedging_judge: str | None = None
    hedging_max_candidates: int = 50

    def base_path(self) -> Path:
        return Path(self.base_dir)

    def output_path(self) -> Path:
        p = Path(self.output_dir)
        return p if p.is_absolute() else self.base_path() / p
