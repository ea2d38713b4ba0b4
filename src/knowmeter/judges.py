"""Parsing ``--judge`` values (``executor:model``) into judge specs."""

from __future__ import annotations

import shlex
import shutil

from knowmeter.errors import InputError
from knowmeter.executors import (
    Executor,
    ExecutorSpec,
    ExecutorUnavailable,
    UnknownExecutor,
    create_executor,
    executor_names,
)
from knowmeter.grading import JudgeSpec


def split_judge(value: str) -> tuple[str, str | None]:
    """``claude:opus`` → (``claude``, ``opus``); ``python judge.py:m`` → (``python judge.py``, ``m``);
    a value without a model part is the executor alone."""
    name, sep, model = value.partition(":")
    if sep and name in executor_names():
        return name, model or None
    left, sep, right = value.rpartition(":")
    if sep and left:
        argv = shlex.split(left)
        if argv and (shutil.which(argv[0]) or "/" in argv[0]):
            return left, right or None
    return value, None


def executor_for(value: str, what: str) -> tuple[Executor, str | None]:
    """The executor and model named by an ``executor:model`` value; ``what`` names the option
    in the one-line error (e.g. ``--judge 'x:y'``)."""
    name, model = split_judge(value)
    try:
        return create_executor(ExecutorSpec(name, model)), model
    except (UnknownExecutor, ExecutorUnavailable) as exc:
        raise InputError(f"{what}: {exc}") from None


def build_judges(values: list[str]) -> list[JudgeSpec]:
    """One JudgeSpec per ``--judge`` value (an ensemble when several)."""
    judges = []
    for value in values:
        executor, model = executor_for(value, f"--judge {value!r}")
        judges.append(JudgeSpec(value, executor, model))
    return judges
