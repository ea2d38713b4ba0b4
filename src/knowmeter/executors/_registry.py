"""Executor registry: a name in a config file or on the command line maps to a factory."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from knowmeter.executors._protocol import Executor


@dataclass(slots=True)
class ExecutorSpec:
    """How to build an executor: a registry name (or a command) plus options. ``unsealed`` is the
    user's explicit consent to run agent CLIs without sealing tasks from each other
    (``--unsealed``); executors that do not seal ignore it."""

    name: str
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    unsealed: bool = False


Factory = Callable[[ExecutorSpec], Executor]

_REGISTRY: dict[str, Factory] = {}
_BUILTINS_LOADED = False


def register_executor(name: str) -> Callable[[Factory], Factory]:
    """Decorator: register ``factory`` under ``name``."""

    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        return factory

    return deco


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    import importlib

    for module in ("offline", "script", "agents"):
        try:
            importlib.import_module(f"knowmeter.executors._{module}")
        except ModuleNotFoundError as exc:  # an optional executor module not written yet
            if exc.name != f"knowmeter.executors._{module}":
                raise


def executor_names() -> list[str]:
    """The registered executor names."""
    _load_builtins()
    return sorted(_REGISTRY)


class UnknownExecutor(ValueError):
    """The name is neither registered nor a command on PATH."""


def create_executor(spec: ExecutorSpec) -> Executor:
    """Build the executor for ``spec``: a registry name, or any command (which then speaks the
    ``script`` protocol, as omk's custom executors do)."""
    _load_builtins()
    factory = _REGISTRY.get(spec.name)
    if factory is not None:
        return factory(spec)
    argv = shlex.split(spec.name)
    if argv and (shutil.which(argv[0]) is not None or "/" in argv[0]):
        if "/" in argv[0] and shutil.which(argv[0]) is None:
            raise UnknownExecutor(f"executor command not found or not executable: {argv[0]}")
        options = dict(spec.options)
        options["command"] = spec.name
        return _REGISTRY["script"](ExecutorSpec("script", spec.model, options))
    raise UnknownExecutor(
        f"unknown executor {spec.name!r}: not a registered executor ({', '.join(executor_names())}) "
        "and not a command on PATH"
    )
