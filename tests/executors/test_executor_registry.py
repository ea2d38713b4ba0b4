"""The executor registry imports a built-in executor's module when that name is first built: a run
of a script agent imports no agent CLI or SDK executor (start-up CPU, issue 32)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from knowmeter.executors import executor_names
from knowmeter.executors._registry import _REGISTRY, BUILTIN_MODULES


def test_the_table_names_every_built_in_executor_and_the_module_that_registers_it() -> None:
    code = (
        "from knowmeter.executors import _registry\n"
        "print(all(_registry._factory(name) is not None for name in _registry.BUILTIN_MODULES))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"  # each name's module, imported in a fresh process, registers it
    for module in set(BUILTIN_MODULES.values()):
        importlib.import_module(f"knowmeter.executors.{module}")
    built_in = {name for name, factory in _REGISTRY.items() if factory.__module__.startswith("knowmeter.executors.")}
    assert built_in == set(BUILTIN_MODULES)
    assert set(BUILTIN_MODULES) <= set(executor_names())


def test_a_command_or_a_name_imports_only_its_own_executor(tmp_path: Path) -> None:
    (tmp_path / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    (tmp_path / "agent.sh").chmod(0o755)
    agents = [f"knowmeter.executors.{m}" for m in BUILTIN_MODULES.values() if m not in ("_script", "_echo")]
    code = (
        "import sys\nfrom knowmeter.executors import ExecutorSpec, create_executor\n"
        "print(create_executor(ExecutorSpec('./agent.sh')).name, create_executor(ExecutorSpec('echo')).name)\n"
        f"print(sorted(m for m in {agents!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert out.splitlines() == ["script echo", "[]"]
