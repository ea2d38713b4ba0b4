"""The executor protocol: how knowmeter asks an agent to answer one task."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from knowmeter.traces import Trace, Usage, empty_usage, usage_from


@dataclass(slots=True)
class SkillInstall:
    """A skill to install into the task's workspace (``.claude/skills/<name>/``) instead of, or
    as well as, passing its text as the system prompt."""

    name: str
    source_dir: Path | None  # a directory skill's folder; None for a single-file skill
    text: str  # the SKILL.md (or .md file) text


@dataclass(slots=True)
class ExecRequest:
    """One task for an executor.

    ``system`` is the variant's artifact text (None for the baseline). ``workspace`` is the
    directory the agent works in — a per-task copy when the runner isolates tasks. ``prompt``
    already includes the sample's context. ``protected`` are paths the agent must not see
    (every variant's artifact, the sample files, the run store): sealing executors hide them.
    ``extra_skills`` are installed beside the variant's skill by executors that deliver it as a
    skill (an activation case's distractors); other deliveries ignore them.
    """

    task_id: str
    sample_id: str
    prompt: str
    system: str | None
    model: str | None = None
    workspace: Path | None = None
    skill: SkillInstall | None = None
    timeout_s: float | None = None
    max_cost_usd: float | None = None
    env: dict[str, str] = field(default_factory=dict)
    protected: tuple[Path, ...] = ()
    extra_skills: tuple[SkillInstall, ...] = ()


@dataclass(slots=True)
class ExecResult:
    """What an executor returns for one task.

    ``cost_usd`` is None when the executor did not report a cost: unknown, never a fake 0.
    ``error`` is set when the run failed; ``output`` may still hold partial text. ``timed_out``
    marks a run stopped at its timeout: the trace, usage and output then hold what was observed
    until then.
    """

    output: str
    trace: Trace
    usage: Usage = field(default_factory=empty_usage)
    cost_usd: float | None = None
    latency_ms: float | None = None
    duration_api_ms: float | None = None
    num_turns: int | None = None
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
            "latency_ms": self.latency_ms,
            "duration_api_ms": self.duration_api_ms,
            "num_turns": self.num_turns,
            "error": self.error,
            "timed_out": self.timed_out,
            "trace": self.trace.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExecResult:
        from knowmeter.traces import trace_from_dict

        return cls(
            output=d.get("output", ""),
            trace=trace_from_dict(d.get("trace") or {}),
            usage=usage_from(d.get("usage")),
            cost_usd=d.get("cost_usd"),
            latency_ms=d.get("latency_ms"),
            duration_api_ms=d.get("duration_api_ms"),
            num_turns=d.get("num_turns"),
            error=d.get("error"),
            timed_out=bool(d.get("timed_out", False)),
        )


class ExecutorError(Exception):
    """Raised by an executor for a failure worth retrying (a crash, a timeout, an API error)."""


class ExecutorUnavailable(Exception):
    """The executor cannot run here at all (CLI or SDK missing); the message is the install hint."""


@runtime_checkable
class Executor(Protocol):
    """An agent under test (or a judge). Implementations are async and must not block the loop.

    An implementation subclasses ``Executor`` to get the capabilities' defaults (the safe ones:
    an executor that does not say otherwise has its workspace checked as an agent CLI's, is not
    known to be sealed and is stopped by the runner at the timeout). A wrapper forwards the
    capabilities of the executor it wraps."""

    #: registry name, e.g. ``offline``, ``script``, ``claude``
    name: str
    #: True for agents that are not LLMs (reports label them)
    non_llm: bool
    #: whether each task's agent runs sealed from every other task (True / False); None for
    #: executors that run no agent process of their own in a sandbox (offline, script, APIs)
    sealed: bool | None = None
    #: True for an executor that stops a task at ``request.timeout_s`` itself and returns what it
    #: observed until then: the runner's own timeout then waits a grace period longer, so the
    #: partial trace is kept
    enforces_timeout: bool = False
    #: True for executors whose workspace may expose the answer key or another arm's artifact
    #: with a warning (omk's default for the offline and script agents; a model API reads no
    #: workspace); False (the default) refuses such a workspace, as for an agent CLI free to explore it
    workspace_leak_allowed: bool = False

    def identity(self) -> str:
        """A string that changes whenever the executor would answer differently for the same
        request (command line, version, options). Part of the response-cache key."""
        ...

    async def run(self, request: ExecRequest) -> ExecResult:
        """Run one task. Raise ``ExecutorError`` for retryable failures."""
        ...


class ExecutorWrapper(Executor):
    """An executor that stands in for ``inner`` (charging its calls, running them elsewhere): its
    name, kind and capabilities are ``inner``'s, so a wrapper never turns a check off."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.name = inner.name
        self.non_llm = inner.non_llm
        self.sealed = inner.sealed
        self.enforces_timeout = inner.enforces_timeout
        self.workspace_leak_allowed = inner.workspace_leak_allowed

    def identity(self) -> str:
        return self.inner.identity()
