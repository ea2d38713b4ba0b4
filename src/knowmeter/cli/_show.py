"""``knowmeter show RUN SAMPLE``: one sample's tasks in the terminal — per variant and repeat the
answer, every assertion, the scores, the judges' reasoning, the trace and the gap signals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from knowmeter.cli._errors import guarded
from knowmeter.cli._output import output_dir_option

#: a tool call's input and a tool result's output are shown up to this many characters
_CLIP = 200


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 1] + "…"


def _score(value: Any) -> str:
    return "unknown" if value is None else f"{float(value):.2f}"


def _event(ev: dict[str, Any]) -> str:
    turn = ev.get("turn", "?")
    kind = ev.get("kind")
    if kind == "tool_call":
        return f"{turn} → {ev.get('tool')} {_clip(json.dumps(ev.get('input'), ensure_ascii=False))}"
    if kind == "tool_result":
        status = str(ev.get("status")) + (f" ({ev['error_kind']})" if ev.get("error_kind") else "")
        return f"{turn} ← {status}: {_clip(str(ev.get('output') or ''))}"
    return f"{turn} {ev.get('role', '?')}: {_clip(str(ev.get('text') or ''))}"


def _layer(task: Any, name: str, value: Any) -> str:
    """A layer's score; a layer the task has nothing for — no assertion of it, no judge — is
    ``absent`` (as the summary says), one whose grading was there but gave no score ``unknown``."""
    if value is not None:
        return _score(value)
    if name == "judge":
        there = bool(task.judges or task.judge_error)
    else:
        there = any(a.get("layer") == name for a in task.assertions)
    return "unknown" if there else "absent"


def _task_lines(task: Any, role: str) -> list[tuple[str, str]]:
    """(indent, text) lines of one task."""
    layers = " · ".join(f"{name} {_layer(task, name, v)}" for name, v in task.layers.items())
    cost = "unknown" if task.cost_usd is None else f"${task.cost_usd:.4f}"
    latency = "unknown" if task.latency_ms is None else f"{task.latency_ms:.0f} ms"
    cached = " · from the response cache" if task.cached else ""
    head = f"{task.variant} · {role} · repeat {task.repeat} · composite {_score(task.composite)}"
    out = [("", head + (f" ({layers})" if layers else "")), ("  ", f"agent cost {cost} · latency {latency}{cached}")]
    if task.error:
        return [*out, ("  ", f"✗ error (not graded): {task.error}")]
    out.append(("  ", "answer:"))
    out += [("    ", line) for line in (task.output.splitlines() or ["(empty)"])]
    decided = [a for a in task.assertions if a.get("passed") is not None]
    passed = sum(1 for a in decided if a["passed"])
    out.append(("  ", f"assertions: {passed} of {len(decided)} passed"))
    for a in task.assertions:
        mark = "?" if a.get("passed") is None else "✓" if a["passed"] else "✗"
        out.append(("    ", f"{mark} {a.get('type')} [{a.get('layer')}]: {a.get('message', '')}"))
    for j in task.judges:
        why = j.get("reasoning") or j.get("reason") or j.get("error") or ""
        out.append(("  ", f"judge {j.get('judge')}: {_score(j.get('mean'))} — {_clip(str(why))}"))
    if task.judge_error:
        out.append(("  ", f"judge error: {task.judge_error}"))
    out.append(("  ", f"trace: {len(task.events)} event(s)"))
    out += [("    ", _event(ev)) for ev in task.events]
    for sig in task.gap_signals:
        out.append(("  ", f"gap signal {sig['source']}: {sig.get('context') or sig.get('target', '')}"))
    return out


@click.command("show")
@click.argument("run")
@click.argument("sample")
@click.option("--variant", help="Only this variant (default: every variant).")
@click.option("--repeat", type=click.IntRange(min=0), help="Only this repeat (default: every repeat).")
@output_dir_option()
@guarded
def show_cmd(run: str, sample: str, variant: str | None, repeat: int | None, output_dir: str) -> None:
    """Show one sample of RUN (an id, a prefix, 'latest' or a run directory): for each variant
    and repeat the prompt, the answer, every assertion with its message, the layer scores, the
    judges' scores and reasoning, the trace (tool calls and results) and the gap signals."""
    from difflib import get_close_matches

    from knowmeter.cli._output import console
    from knowmeter.errors import InputError
    from knowmeter.printable import Printer
    from knowmeter.report import ReportView, read_report
    from knowmeter.store import find_run

    run_dir = find_run(Path(output_dir), run)
    view = ReportView(read_report(run_dir.path / "report.json", run_dir.id))
    roles = {v.name: v.role for v in view.variants}
    if variant is not None and variant not in roles:
        raise InputError(f"run {run_dir.id} has no variant {variant!r} (its variants: {', '.join(roles)})")
    ids: dict[str, None] = {}
    tasks = []
    for task in view.tasks():
        ids[task.sample_id] = None
        if task.sample_id == sample and variant in (None, task.variant) and repeat in (None, task.repeat):
            tasks.append(task)
    if not tasks:
        if sample in ids:
            raise InputError(f"sample {sample!r} of run {run_dir.id} has no task of that variant and repeat")
        near = get_close_matches(sample, list(ids), n=3)
        hint = f"did you mean {', '.join(near)}?" if near else f"its samples: {', '.join(list(ids)[:10])}"
        raise InputError(f"run {run_dir.id} has no sample {sample!r} ({hint})")
    out = Printer(console())
    out.line(f"sample {sample} · run {run_dir.id}", style="bold")
    if tasks[0].prompt:
        out.line(f"prompt: {tasks[0].prompt}")
    for task in tasks:
        out.blank()
        for indent, text in _task_lines(task, roles.get(task.variant, "?")):
            out.line(text, indent=indent)
