"""``knowmeter probe`` with the deterministic generator on the demo: defaults from eval.yaml,
the written file loads as a sample set, no silent overwrite, one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.samples import load_samples


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "demo")]).exit_code == 0
    monkeypatch.chdir(tmp_path / "demo")
    return tmp_path / "demo"


def test_probe_on_the_demo(demo: Path) -> None:
    res = CliRunner().invoke(cli, ["probe"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("knowledge base workspace/knowledge · 6 files · 6 files, 6 headings · kb ")
    assert lines[1].startswith("non-LLM generator (headings → questions) · prompt probe-headings/2 ")
    assert lines[2].startswith("6 proposed · 6 kept · 0 dropped out of scope")
    assert "next: knowmeter eval --samples probe-samples.yaml" in lines[3]
    text = (demo / "probe-samples.yaml").read_text(encoding="utf-8")
    # the demo's sample-file schema lies beside it: the first line names it, then the provenance
    assert text.startswith(
        "# yaml-language-server: $schema=samples.schema.json\n# Probe sample set (knowmeter probe, gap-signal spec §9)"
    )
    loaded = load_samples(demo / "probe-samples.yaml")
    assert loaded.watermark.count == 6 and {s.provenance for s in loaded.samples} == {"probe"}
    # the eval's own samples were the de-duplication set: none of theirs is repeated
    human = {s.prompt for s in load_samples(demo / "eval-samples.yaml").samples}
    assert not human & {s.prompt for s in loaded.samples}

    again = CliRunner().invoke(cli, ["probe", "--count", "2"])
    assert again.exit_code == 2 and "already exists; choose another output file or pass --force" in again.output
    assert (demo / "probe-samples.yaml").read_text(encoding="utf-8") == text
    forced = CliRunner().invoke(cli, ["probe", "--count", "2", "--force"])
    assert forced.exit_code == 0 and len(yaml.safe_load((demo / "probe-samples.yaml").read_text())) == 2


def test_probe_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["probe"])
    assert res.exit_code == 2 and res.output.strip() == (
        "knowmeter: error: no knowledge base: pass --kb DIR (or run in a folder whose eval.yaml has knowledgeDirs)"
    )
    res = CliRunner().invoke(cli, ["probe", "--kb", "nope"])
    assert res.exit_code == 2 and "nope: knowledge base folder not found" in res.output
    assert "Traceback" not in res.output
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("# A\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["probe", "--kb", "kb", "--generator", "nosuchexecutor:m"])
    assert res.exit_code == 2 and "--generator 'nosuchexecutor:m'" in res.output


#: A model generator as a script agent: one question, and the cost given as argv[1] (none without).
GENERATOR = """\
import json, sys
sys.stdin.read()
reply = {"output": json.dumps({"questions": [{"question": "How long is the refund window?"}]})}
if len(sys.argv) > 1:
    reply["costUSD"] = float(sys.argv[1])
print(json.dumps(reply))
"""


@pytest.mark.parametrize(
    ("cost", "line"),
    [
        ("5", "⚠ budget $0.01 exceeded: $5.0000 spent (a call's cost is known only after it ran"),
        ("", "⚠ budget $0.01 could not be enforced: none of the 1 model call(s) reported its cost"),
        ("0.001", None),
    ],
)
def test_a_model_generator_says_what_its_budget_could_not_do(demo: Path, cost: str, line: str | None) -> None:
    (demo / "gen.py").write_text(GENERATOR)
    generator = f"{sys.executable} {demo / 'gen.py'} {cost}".strip() + ":m"
    res = CliRunner().invoke(cli, ["probe", "--generator", generator, "--budget-usd", "0.01", "--out", "p.yaml"])
    assert "1 model call(s)" in res.output, res.output  # (its one question is out of scope: nothing is written)
    warnings = [w for w in res.output.splitlines() if w.startswith("⚠")]
    assert len(warnings) == (line is not None) and all(w.startswith(str(line)) for w in warnings)
