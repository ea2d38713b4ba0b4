"""``knowmeter eval`` run as ``python -m knowmeter`` does, with its CPU seconds marked at each stage
boundary (a child process of ``bench_finish.py``; prints one ``mark NAME CPU`` line a stage to stderr).

Stages: ``interpreter`` (before this script runs), ``start-up`` (imports, config, samples, plan,
up to the runner's first call), ``window`` (``evaluation.execute``: the runner), ``after-window``
(the runner's return to ``_execute``'s), ``report imports`` (``knowmeter.pipeline`` and what it
pulls in), then ``finalize``'s parts (``run.json``, the fold pass over results.jsonl, each
section's result, the Report model, gates + decision, the probe comparison, report.json, the
index), ``report.html`` (``_write_files``), ``terminal summary`` (``print_report``) and ``exit``
(up to ``atexit``)."""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.util
import resource
import sys
import types
from collections.abc import Callable
from typing import Any


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


marks: list[tuple[str, float]] = [("interpreter", cpu())]
last = [marks[0][1]]


def mark(name: str) -> None:
    now = cpu()
    marks.append((name, now - last[0]))
    last[0] = now


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        mark(f"before {name}")
        out = fn(*args, **kwargs)
        mark(name)
        return out

    return wrapper


def report_marks() -> None:
    mark("exit")
    for name, seconds in marks:
        if not name.startswith("before ") or seconds > 0.0005:
            print(f"mark {name}\t{seconds:.6f}", file=sys.stderr)


atexit.register(report_marks)


class _PipelineLoaded(importlib.abc.MetaPathFinder):
    """Calls ``patch_finalize`` once ``knowmeter.pipeline`` is imported, wherever eval imports it."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "knowmeter.pipeline":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        exec_module = spec.loader.exec_module

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            patch_finalize(module)

        spec.loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


def patch_finalize(pipeline: types.ModuleType) -> None:
    """Time finalize's parts (``pipeline`` just imported: the report stack)."""
    import knowmeter.cli._run as run

    mark("report imports")
    for name in ("build_report", "apply_gates", "add_probe_comparison", "write_report", "index_run"):
        setattr(pipeline, name, timed(name, getattr(pipeline, name)))
    sections = pipeline.report_sections

    def timed_sections(*args: Any, **kwargs: Any) -> list[Any]:
        def wrap(builder: Any) -> Any:
            def build(run_record: dict[str, Any]) -> Any:
                section = builder(run_record)
                name = type(section).__name__
                original = section.result

                def result() -> dict[str, Any]:
                    mark("fold pass (results.jsonl read, checked, folded)")  # zero after the first
                    out: dict[str, Any] = original()
                    mark(f"section {name}")
                    return out

                section.result = result
                return section

            return build

        return [wrap(b) for b in sections(*args, **kwargs)]

    pipeline.report_sections = timed_sections  # type: ignore[attr-defined]
    run._write_files = timed("report.html (_write_files)", run._write_files)
    run.print_report = timed("terminal summary (print_report)", run.print_report)


def main() -> None:
    import knowmeter.api as api
    import knowmeter.evaluation as evaluation

    execute = evaluation.execute

    async def timed_execute(*args: Any, **kwargs: Any) -> Any:
        mark("start-up (imports, config, samples, plan)")
        out = await execute(*args, **kwargs)
        mark("window (evaluation.execute)")
        return out

    evaluation.execute = timed_execute
    inner = api._execute

    def after_window(*args: Any, **kwargs: Any) -> Any:
        out = inner(*args, **kwargs)
        mark("after window (runner return)")
        sys.meta_path.insert(0, _PipelineLoaded())
        return out

    api._execute = after_window
    from knowmeter.cli import main as cli

    sys.argv = ["knowmeter", *sys.argv[1:]]
    cli()


if __name__ == "__main__":
    main()
