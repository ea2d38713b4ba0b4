"""Executor registry: a name in a config file or on the command line maps to a factory."""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowmeter.executors._protocol import Executor


@dataclass(slots=True)
class ExecutorSpec:
    """How to build an executor: a registry name (or a command) plus options. ``unsealed`` is the
    user's explicit consent to run agent CLIs without sealing tasks from each other
    (``--unsealed``); executors that do not seal ignore it. ``base_dir`` is the folder a command
    was given in (eval.yaml's, or the shell's for a flag): its relative paths name files there,
    not in the task's workspace where it runs (None: the current folder)."""

    name: str
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    unsealed: bool = False
    base_dir: str | None = None


Factory = Callable[[ExecutorSpec], Executor]

_REGISTRY: dict[str, Factory] = {}

#: Each built-in executor's name → the module that registers it, imported when that name is first
#: built: a run imports its own executor, not every agent's (a test keeps this table true)
BUILTIN_MODULES: dict[str, str] = {
    "offline": "_offline",
    "echo": "_echo",
    "script": "_script",
    "claude": "_claude_cli",
    "codex": "_codex_cli",
    "claude-sdk": "_claude_sdk",
    "openai": "_openai_api",
    "anthropic": "_anthropic_api",
}


def register_executor(name: str) -> Callable[[Factory], Factory]:
    """Decorator: register ``factory`` under ``name``."""

    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        return factory

    return deco


def _factory(name: str) -> Factory | None:
    """The factory registered under ``name``, importing its built-in module on first use."""
    if name not in _REGISTRY and name in BUILTIN_MODULES:
        importlib.import_module(f"knowmeter.executors.{BUILTIN_MODULES[name]}")
    return _REGISTRY.get(name)


def executor_names() -> list[str]:
    """The registered executor names (the built-in ones and any registered since)."""
    return sorted({*_REGISTRY, *BUILTIN_MODULES})


def resolve_argv(argv: list[str], folder: Path) -> list[str]:
    """``argv`` with its relative paths made absolute against ``folder``, where the command was
    given: the program when it is a path (``./agent.py``, ``bin/agent``) and each argument that
    names a file there (``python agent.py``). The command runs in the task's workspace, where a
    relative path would name another file, or none."""
    out = []
    for i, arg in enumerate(argv):
        relative = not arg.startswith("-") and not Path(arg).is_absolute()
        if relative and (("/" in arg) if i == 0 else (folder / arg).is_file()):
            arg = os.path.abspath(folder / arg)
        out.append(arg)
    return out


def command_given_in(command: str, folder: Path) -> str:
    """``command`` (a registry name or a command line) with its relative paths made absolute
    against ``folder`` (``resolve_argv``); a registry name is returned as it is."""
    if command in _REGISTRY or command in BUILTIN_MODULES:
        return command
    argv = shlex.split(command)
    resolved = resolve_argv(argv, folder)
    return command if resolved == argv else shlex.join(resolved)


class UnknownExecutor(ValueError):
    """The name is neither registered nor a command on PATH."""


def create_executor(spec: ExecutorSpec) -> Executor:
    """Build the executor for ``spec``: a registry name, or any command (which then speaks the
    ``script`` protocol, as omk's custom executors do)."""
    factory = _factory(spec.name)
    if factory is not None:
        executor = factory(spec)
        if not isinstance(executor, Executor):  # a plugin's class written before capabilities were part of the protocol
            raise UnknownExecutor(
                f"executor {spec.name!r}: {type(executor).__name__} is not a knowmeter.executors.Executor; "
                "subclass it (it gives the capabilities sealed, enforces_timeout and workspace_leak_allowed "
                "their defaults)"
            )
        return executor
    argv = shlex.split(spec.name)
    if argv and (shutil.which(argv[0]) is not None or "/" in argv[0]):
        options = dict(spec.options)
        options["command"] = spec.name
        script = _factory("script")
        assert script is not None
        return script(ExecutorSpec("script", spec.model, options, base_dir=spec.base_dir))
    raise UnknownExecutor(
        f"unknown executor {spec.name!r}: not a registered executor ({', '.join(executor_names())}) "
        "and not a command on PATH"
    )
