"""Hostile input files and flags: one line naming the file, exit 2, before any task runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import km, km_process

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
DEEP = "[" * 200_000

CASES: dict[str, tuple[str, bytes, str]] = {
    # name: (file, content, expected words in the one line)
    "alias bomb": ("eval-samples.yaml", BOMB.encode(), "alias"),
    "alias bomb config": (
        "eval.yaml",
        f"samples: s.yaml\nx:\n  {BOMB.replace(chr(10), chr(10) + '  ')}".encode(),
        "alias",
    ),
    "non-UTF-8 config": ("eval.yaml", b"samples: \xff\xfe.yaml\n", "not UTF-8"),
    "non-UTF-8 samples": ("eval-samples.yaml", b"- sample_id: \xc3\x28\n", "not UTF-8"),
    "deep JSON samples": ("eval-samples.json", DEEP.encode(), "eval-samples.json"),
    "deep JSONL samples": ("eval-samples.jsonl", DEEP.encode(), "line 1"),
    "deep YAML samples": ("eval-samples.yaml", DEEP.encode(), "eval-samples.yaml"),
    "deep config": ("eval.yaml", DEEP.encode(), "eval.yaml"),
    "moderately deep samples": ("eval-samples.json", (b"[" * 900) + (b"]" * 900), "deeper than"),
    "int tag": ("eval.yaml", b"concurrency: !!int x\n", "!!tag"),
    "timestamp tag": ("eval-samples.yaml", b"- sample_id: !!timestamp 2001-13-45\n  prompt: p\n", "!!tag"),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.slow
def test_hostile_file_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    file, content, words = CASES[name]
    (tmp_path / file).write_bytes(content)
    if file == "eval.yaml":
        (tmp_path / "eval-samples.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    r = km_process("eval", "--control", "baseline", cwd=tmp_path)  # a real process: its recursion limit, one line
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and words in r.stderr, r.stderr
    assert file in r.stderr
    assert not (tmp_path / ".knowmeter").exists()  # nothing ran


@pytest.mark.parametrize(
    "args, words",
    [
        (["--samples", "folder.json"], "is a folder"),
        (["--seed", "-1"], "--seed"),
        (["--budget-usd", "nan"], "--budget-usd"),
        (["--max-gap-rate", "nan"], "--max-gap-rate"),  # nan passes every bound: it failed the gate as 'max nan%'
        (["--threshold", "nan"], "--threshold"),
    ],
)
def test_bad_flags_are_refused_before_anything_runs(tmp_path: Path, args: list[str], words: str) -> None:
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "eval-samples.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    r = km("eval", "--control", "baseline", *args, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / ".knowmeter" / "runs").exists()


def test_a_crash_has_its_own_exit_code_and_a_log(tmp_path: Path) -> None:
    """An internal error (a command that raises what no handler expects) exits 3 with one line
    naming a log file that holds the traceback."""
    code = (
        "import sys; from knowmeter.cli import main; import knowmeter.cli._runs as m\n"
        "def boom(**kw):\n    raise RuntimeError('kaput')\n"
        "m.runs_cmd.callback = boom; sys.argv = ['knowmeter', 'runs']; main()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert r.returncode == 3 and r.stderr.count("\n") == 1, r.stderr
    assert "internal error: RuntimeError: kaput" in r.stderr
    log = Path(r.stderr.split("traceback in ")[1].strip())
    assert "Traceback" in log.read_text() and "kaput" in log.read_text()
    log.unlink()
