"""The parsed options of ``eval``, ``comprehend`` and ``activation``, typed: built once from
click's keyword arguments at the command function and read by attribute everywhere after, so a
renamed click parameter or field fails loudly (a ``TypeError`` at the command's first run, and
``tests/cli/test_cli_options.py``) instead of reading as "not given". A command's settings (the
flags ``knowmeter.settings`` defines) are its ``Overrides``. Import-light: ``--help`` reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from knowmeter.settings import COMPREHEND, EVAL, Overrides, given, settings_of

if TYPE_CHECKING:  # the activation package is heavy; the annotation only names its type
    from knowmeter.activation import Counts


def _split(opts: Mapping[str, Any], command: str) -> tuple[Overrides, dict[str, Any]]:
    """A command's parsed options: its settings (by the definition's names) as ``Overrides``,
    and the rest, for the fields of its options type (a key it lacks is a ``TypeError``, as is a
    field click did not give)."""
    names = set(settings_of(command))
    return Overrides(**given(opts, command)), {k: v for k, v in opts.items() if k not in names}


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """``knowmeter eval``'s options; ``settings`` the run configuration's overrides."""

    settings: Overrides
    resume: str | None
    backend: str
    ray_address: str | None
    dry_run: bool
    as_json: bool
    junit: Path | None
    markdown: Path | None
    csv: Path | None
    quiet: bool
    report_only: bool

    @classmethod
    def of(cls, opts: Mapping[str, Any]) -> EvalOptions:
        settings, rest = _split(opts, EVAL)
        return cls(settings=settings, **rest)


@dataclass(frozen=True, slots=True)
class ComprehendOptions:
    """``knowmeter comprehend``'s options; ``settings`` those it shares with ``eval``."""

    settings: Overrides
    skill: str | None
    evals: str | None
    executor: str
    judges: tuple[str, ...]
    repeat: int
    judge_repeat: int
    ngram: int
    cwd: str | None
    resume: str | None
    write_state: bool
    calibrate: bool
    on_miscalibration: Literal["refuse", "flag"]
    anchors: str | None
    as_json: bool

    @classmethod
    def of(cls, opts: Mapping[str, Any]) -> ComprehendOptions:
        settings, rest = _split(opts, COMPREHEND)
        return cls(settings=settings, **rest)


@dataclass(frozen=True, slots=True)
class ActivationOptions:
    """``knowmeter activation``'s options (it takes no ``knowmeter.settings`` setting but
    ``--executor-option``, so it has no ``Overrides``)."""

    skill: str | None
    case_files: tuple[str, ...]
    against: str | None
    description: str | None
    skills_dirs: tuple[str, ...]
    distractors: tuple[str, ...]
    counts: Counts
    split: bool
    executor: str
    model: str | None
    executor_options: tuple[str, ...]
    repeat: int
    concurrency: int | None
    timeout_s: float | None
    retry: int | None
    no_cache: bool
    budget_usd: float | None
    seed: int | None
    output_dir: str | None
    resume: str | None
    report_run: str | None
    trends: bool
    as_json: bool
    junit: Path | None
    markdown: Path | None
    csv: Path | None

    @classmethod
    def of(cls, opts: Mapping[str, Any]) -> ActivationOptions:
        return cls(**opts)
