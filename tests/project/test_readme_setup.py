"""Issue 17 item 9: the README's two set-up commands work from the repository root one after
the other, and .ci/run installs and tests exactly as the README says."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Set up and run", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.slow
def test_command_one_runs_the_demo_and_leaves_the_shell_where_it_was(tmp_path: Path) -> None:
    first, _ = readme_commands()
    install, rest = first.split(" && ", 1)
    assert install == "pip install -e ."  # knowmeter is installed (editable) in the test environment
    bindir = Path(sys.executable).parent
    script = f'export PATH="{bindir}:$PATH"; {rest}; echo "rc=$?"; pwd'
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    lines = out.stdout.strip().splitlines()
    assert lines[-2] == "rc=0", out.stdout[-2000:] + out.stderr[-2000:]
    assert Path(lines[-1]) == tmp_path  # command 2, pasted next, runs from the repository root
    assert any(line.startswith("PROGRESS · ") for line in lines)
    assert (tmp_path / "demo" / ".knowmeter" / "index.sqlite").is_file()


def test_ci_installs_and_tests_the_way_the_readme_says() -> None:
    _, second = readme_commands()
    install, test_cmd = second.rsplit(" && ", 1)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert install in ci
    assert re.search(rf"^{re.escape(test_cmd.replace(' -q', ''))} -q\b", ci, re.M), test_cmd
    dev = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    # every optional module a test imports with importorskip is a dev dependency: no test is skipped
    skipped = set(
        re.findall(
            r'importorskip\("([\w.]+)"',
            "".join(
                p.read_text(encoding="utf-8")
                for p in (REPO / "tests").rglob("test_*.py")
                if "node_modules" not in p.parts
            ),
        )
    )
    names = {re.split(r"[<>=\[]", d)[0].replace("-", "_") for d in dev}
    assert {m.split(".")[0] for m in skipped} <= names, skipped
