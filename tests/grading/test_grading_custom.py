"""`custom` assertions: a user function in a child process with a timeout."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from knowmeter.errors import InputError
from knowmeter.grading import GradingConfig
from knowmeter.traces import ToolStatus
from tests.grading.grading_helpers import load, make_result, run, sample

CHECKS = """
import asyncio, os, subprocess, sys, time
from pathlib import Path

def has_sql(output, sample, trace):
    return "SQL" in output

def detailed(output, sample, trace):
    reads = [e for e in trace["events"] if e["kind"] == "tool_call" and e["tool"] == "Read"]
    return {"pass": len(reads) == 1, "reason": f"{sample['sample_id']}: {len(reads)} reads"}

def omk_style(output, sample, trace):
    return {"passed": False, "message": "too vague", "score": 0.2}

def crash(output, sample, trace):
    raise RuntimeError("boom in the check")

def hang(output, sample, trace):
    time.sleep(60)

def hang_with_child(output, sample, trace):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    Path("child.pid").write_text(str(child.pid))
    time.sleep(60)

def hard_exit(output, sample, trace):
    os._exit(3)

def chatty(output, sample, trace):
    print("debug output on stdout")
    return True

def wrong_type(output, sample, trace):
    return 42

async def coroutine(output, sample, trace):
    await asyncio.sleep(0)
    return output.startswith("答")

def cwd_file(output, sample, trace):
    return Path("expected.txt").read_text().strip() == output
"""


@pytest.fixture()
def evals(tmp_path: Path) -> Path:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "mine.py").write_text(CHECKS, encoding="utf-8")
    (tmp_path / "expected.txt").write_text("答案")
    return tmp_path


def custom(evals: Path, fn: str, output: str = "SQL", **extra: object) -> tuple[bool | None, str]:
    assertions = load([{"type": "custom", "fn": f"checks/mine.py:{fn}", **extra}], base_dir=evals)
    result = make_result(output, tools=[("Read", {"file_path": "a"}, "x", ToolStatus.SUCCESS)])
    g = run(sample(), result, assertions, config=GradingConfig(custom_timeout_s=20))
    return g.assertions[0].passed, g.assertions[0].message


@pytest.mark.slow
def test_bool_result(evals: Path) -> None:
    assert custom(evals, "has_sql", "SQL injection")[0] is True
    assert custom(evals, "has_sql", "nothing")[0] is False
    assert custom(evals, "has_sql", "SQL injection", **{"not": True})[0] is False


def test_dict_results_get_sample_and_trace(evals: Path) -> None:
    assert custom(evals, "detailed") == (True, "s1: 1 reads")
    passed, message = custom(evals, "omk_style")
    assert (passed, message) == (False, "too vague")


def test_async_function_and_working_directory(evals: Path) -> None:
    assert custom(evals, "coroutine", "答案")[0] is True
    assert custom(evals, "cwd_file", "答案")[0] is True  # runs in the sample file's directory


def test_crash_fails_only_that_assertion(evals: Path) -> None:
    assertions = load(
        [{"type": "custom", "fn": "checks/mine.py:crash"}, {"type": "contains", "value": "SQL"}], base_dir=evals
    )
    g = run(sample(), make_result("SQL"), assertions)
    assert g.assertions[0].passed is False
    assert "crashed" in g.assertions[0].message
    assert "RuntimeError: boom in the check" in g.assertions[0].message
    assert g.assertions[1].passed is True
    assert g.layers.fact == 3.0


def test_hard_exit_and_bad_return_values_fail(evals: Path) -> None:
    passed, message = custom(evals, "hard_exit")
    assert passed is False
    assert "exit 3" in message
    passed, message = custom(evals, "wrong_type")
    assert passed is False
    assert "expected a bool" in message


def test_stdout_noise_does_not_break_the_result(evals: Path) -> None:
    assert custom(evals, "chatty")[0] is True


@pytest.mark.slow
def test_hang_is_killed_at_the_timeout(evals: Path) -> None:
    start = time.monotonic()
    passed, message = custom(evals, "hang", timeout=1)
    assert passed is False
    assert "timed out after 1s" in message
    assert time.monotonic() - start < 10


@pytest.mark.slow
def test_timeout_kills_the_functions_children_too(evals: Path) -> None:
    passed, _ = custom(evals, "hang_with_child", timeout=2)
    assert passed is False
    pid = int((evals / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the custom function's child process survived the timeout")


def test_layer_override(evals: Path) -> None:
    [fact] = load([{"type": "custom", "fn": "checks/mine.py:has_sql"}], base_dir=evals)
    [behavior] = load([{"type": "custom", "fn": "checks/mine.py:has_sql", "layer": "behavior"}], base_dir=evals)
    assert (fact.layer, behavior.layer) == ("fact", "behavior")


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        ("checks/missing.py:f", "custom assertion file not found"),
        ("checks/mine.py", "fn must be 'path/to/file.py:function'"),
        ("checks/mine.py:not-a-name", "fn must be"),
    ],
)
def test_bad_fn_is_an_input_error_at_load(evals: Path, fn: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        load([{"type": "custom", "fn": fn}], base_dir=evals)


def test_missing_function_is_rejected_at_load_time_with_the_fix(evals: Path) -> None:
    """Issue 17 item 8: a misnamed function used to fail every task at run time, as an agent failure."""
    with pytest.raises(InputError) as err:
        load([{"type": "custom", "fn": "checks/mine.py:has_sqll"}], base_dir=evals)
    message = str(err.value)
    assert "defines no function 'has_sqll'; did you mean 'has_sql'?" in message and "mine.py" in message
    (evals / "checks" / "broken.py").write_text("def f(:\n")
    with pytest.raises(InputError, match="cannot be read as Python"):
        load([{"type": "custom", "fn": "checks/broken.py:f"}], base_dir=evals)
    # a function defined conditionally is still found (the file is read, never run, at load time)
    (evals / "checks" / "cond.py").write_text(
        "try:\n    import nothing_here\nexcept ImportError:\n    def ok(output, sample, trace):\n        return True\n"
    )
    assert load([{"type": "custom", "fn": "checks/cond.py:ok"}], base_dir=evals)
