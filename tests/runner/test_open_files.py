"""No file descriptor left is the machine's fault, not a task's: the run makes room for its
concurrency (the soft limit raised up to the hard one), and when the hard limit is still too low
it stops with one line saying what to do, keeping what finished (resumable) — instead of
recording every later task as a crash of the agent. Real ``knowmeter`` processes with a shell
agent, under a real ``RLIMIT_NOFILE``."""

from __future__ import annotations

import errno
import json
import resource
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from knowmeter._faults import environment_fault
from knowmeter.executors import ExecRequest, ExecResult
from knowmeter.runner import Budget, ExecutionSettings, execute_tasks
from knowmeter.runner._open_files import make_room, needed
from knowmeter.store import ResultsWriter, iter_results
from tests.runner.test_runner import FakeAgent, setup
from tests.support.cli import KNOWMETER
from tests.support.projects import write_skills

AGENT = '#!/bin/sh\ncat >/dev/null\necho \'{"output":"ok"}\'\n'
SAMPLES = "".join(json.dumps({"sample_id": f"s{i}", "prompt": f"q{i}"}) + "\n" for i in range(40))


class OutOfFilesOn(FakeAgent):
    """Fails its ``n``-th call the way a spawn does when no descriptor is left."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    async def run(self, request: ExecRequest) -> ExecResult:
        if self.calls + 1 == self.n:
            self.calls += 1
            raise OSError(errno.EMFILE, "Too many open files", "/bin/agent")
        return await super().run(request)


def test_no_descriptor_left_stops_the_run_and_keeps_what_finished(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=3)
    with ResultsWriter(tmp_path / "results.jsonl") as writer, pytest.raises(BaseExceptionGroup) as raised:
        anyio.run(
            lambda: execute_tasks(
                tasks,
                OutOfFilesOn(3),
                writer=writer,
                settings=ExecutionSettings(concurrency=1),
                budget=Budget(),
                cache=None,
            )
        )
    assert "too many open files" in (environment_fault(raised.value) or "")
    records = list(iter_results(tmp_path / "results.jsonl"))
    assert [r["task_id"] for r in records] == [t.id for t in tasks[:2]]  # not a crash record for the third


def test_an_executor_bug_is_still_one_tasks_failure(tmp_path: Path) -> None:
    class Broken(FakeAgent):
        async def run(self, request: ExecRequest) -> ExecResult:
            raise OSError(errno.ENOENT, "No such file or directory", "/bin/agent")

    tasks = setup(tmp_path, n=1)
    with ResultsWriter(tmp_path / "results.jsonl") as writer:
        anyio.run(
            lambda: execute_tasks(
                tasks, Broken(), writer=writer, settings=ExecutionSettings(), budget=Budget(), cache=None
            )
        )
    errors = [r["exec"]["error"] for r in iter_results(tmp_path / "results.jsonl")]
    assert len(errors) == 2 and all("No such file" in e for e in errors)


@pytest.fixture
def nofile_limit() -> Iterator[Callable[[int], None]]:
    """Set this process's soft limit on open files; restored afterwards."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    yield lambda soft: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_the_soft_limit_is_raised_to_what_the_concurrency_needs(nofile_limit: Callable[[int], None]) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < needed(16):
        pytest.skip(f"the hard limit ({hard}) is below what the test raises to")
    nofile_limit(40)
    make_room(16)
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == needed(16)
    nofile_limit(needed(16) + 100)
    make_room(16)  # never lowered
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == needed(16) + 100


def project(root: Path) -> Path:
    (root / "eval-samples.jsonl").write_text(SAMPLES)
    write_skills(root, {"a": "Skill A.\n", "b": "Skill B.\n"})
    agent = root / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    return root


def knowmeter(root: Path, *args: str, nofile: tuple[int, int] | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)

    return subprocess.run(
        [*KNOWMETER, *args], cwd=root, capture_output=True, text=True, timeout=120, check=False, preexec_fn=limit
    )


EVAL = ("eval", "--samples", "eval-samples.jsonl", "--control", "a", "--treatment", "b", "--executor", "./agent.sh")


def results(root: Path) -> list[dict]:  # type: ignore[type-arg]
    (run,) = (root / ".knowmeter" / "runs").iterdir()
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_low_soft_limit_is_raised_and_the_run_completes(tmp_path: Path) -> None:
    r = knowmeter(project(tmp_path), *EVAL, "--concurrency", "16", "--quiet", nofile=(30, needed(16)))
    assert r.returncode in (0, 1), r.stderr  # a verdict, whatever it is
    done = results(tmp_path)
    assert len(done) == 80 and not any(x["exec"]["error"] for x in done)


def test_a_low_hard_limit_stops_the_run_with_one_line_and_it_resumes(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = knowmeter(root, *EVAL, "--concurrency", "16", "--quiet", nofile=(30, 30))
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("knowmeter: error: too many open files: this process may hold 30 at once (ulimit -n)")
    assert "--concurrency" in line and "knowmeter eval --resume" in line and "Traceback" not in r.stderr
    assert not any(x["exec"]["error"] for x in results(root))  # no task recorded as the agent's crash
    again = knowmeter(root, "eval", "--resume", "latest", "--quiet")
    assert again.returncode in (0, 1), again.stderr
    done = results(root)
    assert len(done) == 80 and not any(x["exec"]["error"] for x in done)
