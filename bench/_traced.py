"""A benchmark project whose agent answers at once with a realistic trace: 10–30 tool calls per task
(Read, Grep, Glob, Bash; a few searches find nothing), each with its input and a few hundred characters
of output, then an answer of a few sentences. Deterministic per sample, variant and repeat; the
treatment (``b``) answers correctly more often than the control (``a``). Used in-process through
``knowmeter.evaluate`` (no spawning): ``bench_html.py`` measures the page such a run gets."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

from knowmeter.executors import ExecRequest, ExecResult, Executor, register_executor
from knowmeter.traces import ErrorKind, Event, MessageEvent, ToolCallEvent, ToolResultEvent, ToolStatus, Trace

#: the child process's evaluation: registers ``traced`` and runs the plan of ``make_project``
EVAL = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import knowmeter
    from _traced import register
    register()
    report = knowmeter.evaluate(".", samples=["eval-samples.jsonl"], control="a", treatments=["b"],
                                executor="traced", concurrency=8, no_cache=True, repeat=int(sys.argv[2]),
                                bootstrap_samples=1000)
    print(report.run.id)
""")

_WORDS = (
    "refund policy invoice account customer shipping order warranty return label carrier tracking "
    "subscription plan upgrade downgrade billing cycle proration discount coupon tax region currency"
).split()


def make_project(root: Path, n: int) -> None:
    """``n`` samples with a prompt of a sentence or two and one assertion; skills ``a`` and ``b``."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "a.md").write_text("Skill A.\n")
    (root / "skills" / "b.md").write_text("Skill B: the refund window is 30 days.\n")
    rng = random.Random(7)
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i in range(n):
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 30)))
            sample = {
                "sample_id": str(i + 1),
                "prompt": f"Question {i + 1}: how does the {words} work for a customer?",
                "assertions": [{"type": "icontains", "value": "30 days"}],
            }
            fh.write(json.dumps(sample) + "\n")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def trace_for(key: str, treated: bool) -> tuple[str, list[Event]]:
    """(the answer, the trace's events) of one task."""
    rng = random.Random(key)
    events: list[Event] = [MessageEvent(role="user", text=f"task {key}")]
    for k in range(rng.randint(10, 30)):
        tool = rng.choice(("Read", "Grep", "Glob", "Bash", "Read", "Grep"))
        call_id = f"c{k}"
        if tool == "Read":
            inp: dict[str, object] = {"file_path": f"knowledge/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.md"}
        elif tool == "Bash":
            inp = {"command": f"rg -n {rng.choice(_WORDS)} knowledge/ | head -20"}
        else:
            inp = {"pattern": rng.choice(_WORDS) + ".*" + rng.choice(_WORDS)}
        empty = tool in ("Grep", "Glob") and rng.random() < (0.05 if treated else 0.15)
        out = "" if empty else _text(rng, rng.randint(10, 60))
        events.append(ToolCallEvent(id=call_id, tool=tool, input=inp, turn=k))
        events.append(
            ToolResultEvent(
                id=call_id,
                output=out,
                status=ToolStatus.SUCCESS,
                turn=k,
                error_kind=ErrorKind.EMPTY_SEARCH if empty else None,
            )
        )
    right = rng.random() < (0.85 if treated else 0.55)
    answer = _text(rng, rng.randint(40, 120)) + (" The window is 30 days." if right else " I am not sure.")
    events.append(MessageEvent(role="assistant", text=answer, turn=31))
    return answer, events


class Traced(Executor):
    name = "traced"
    non_llm = True
    workspace_leak_allowed = True  # it reads no workspace

    def identity(self) -> str:
        return "traced"

    async def run(self, request: ExecRequest) -> ExecResult:
        treated = "30 days" in (request.system or "")
        answer, events = trace_for(request.task_id, treated)
        return ExecResult(answer, Trace(events=events, source="traced"), cost_usd=0.0, latency_ms=1000.0)


def register() -> None:
    """Register ``traced`` as an executor name."""
    register_executor("traced")(lambda spec: Traced())
