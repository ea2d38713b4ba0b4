"""Task records for tests that need one without running a task."""

from __future__ import annotations

from knowmeter.store import ExecRecord, Grade, TaskRecord, task_id


def task_record(
    sample_id: str = "s1",
    variant: str = "a",
    repeat: int = 0,
    *,
    cost: float | None = 0.01,
    error: str | None = None,
    cached: bool = False,
    grade: Grade | None = None,
    output: str = "",
) -> TaskRecord:
    """A finished task's record (a control's unless ``variant`` is named otherwise)."""
    return TaskRecord(
        task_id=task_id(sample_id, variant, repeat),
        sample_id=sample_id,
        variant=variant,
        role="control" if variant == "a" else "treatment",
        repeat=repeat,
        attempts=1,
        cached=cached,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
        exec=ExecRecord(output=output, cost_usd=cost, error=error),
        grade=grade,
    )
