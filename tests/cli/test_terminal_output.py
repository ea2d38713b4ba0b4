"""Issue 17 item 6 (readable at 80 columns, COLUMNS honoured, --json on runs / trends) and issue
19 item 10 (no control character from agent output, tool inputs, traces or names reaches the
terminal, per command). In-process via click's CliRunner."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from knowmeter.cli import cli
from knowmeter.printable import printable, printable_tree

HERE = Path(__file__).resolve().parent


def invoke(*args: str, columns: int | None) -> Result:
    env = {"COLUMNS": None if columns is None else str(columns)}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo, evaluated twice (once with a gate that fails), so runs / trends have rows."""
    root = tmp_path_factory.mktemp("width")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert invoke("init", "d", columns=80).exit_code == 0
        mp.chdir(root / "d")
        assert invoke("eval", columns=80).exit_code == 0
        assert invoke("eval", "--max-gap-rate", "0.01", columns=80).exit_code == 1
    return root / "d"


def tokens(text: str) -> Counter[str]:
    return Counter(text.split())


@pytest.mark.parametrize("command", [["report", "latest"], ["runs"], ["trends"]])
@pytest.mark.slow
def test_no_word_is_broken_and_nothing_truncated_at_80_and_120_columns(
    project: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(project)
    wide = invoke(*command, columns=1000).stdout
    for width in (80, 120):
        out = invoke(*command, columns=width).stdout
        # the same words in the same numbers as unwrapped: nothing cut, broken or dropped
        assert tokens(out) == tokens(wide), f"{command} at {width}"
        for line in out.splitlines():
            assert len(line) <= width or len(line.split()) == 1, f"{width}: {line!r}"
    if command[0] == "report":
        out80 = invoke(*command, columns=80).stdout
        report = json.loads(invoke(*command, "--json", columns=None).stdout)
        composite = report["comparisons"][0]["metrics"]["composite"]
        ci = composite["diff"]["bca"]
        assert f"[{ci['low']:+.2f}, {ci['high']:+.2f}]" in out80  # the CI and the p-value stay whole
        assert f" {composite['p_adjusted']:.4f} " in out80


def test_piped_output_honours_columns_else_120(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    lengths = {w: max(map(len, invoke("report", "latest", columns=w).stdout.splitlines())) for w in (60, None)}
    assert lengths[60] <= 60 < lengths[None] <= 120


def test_runs_and_trends_have_json(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    runs = json.loads(invoke("runs", "--json", columns=None).stdout)
    # sorted: two runs started in the same second are listed in id order, which is random after the second
    assert sorted(r["outcome"] for r in runs) == ["GATE FAILED", "PROGRESS"]
    assert all(r["tasks_done"] == 46 for r in runs)
    trends = json.loads(invoke("trends", "--json", columns=None).stdout)
    assert len(trends) == 1 and trends[0]["sample_count"] == 23 and trends[0]["not_comparable"] == {}
    assert {(r["variant"], r["layer_set"]) for r in trends[0]["rows"]} == {
        ("support-basic", "fact+behavior"),
        ("support-expert", "fact+behavior"),
    }


JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": json.dumps({"reasoning": "r", "score": 4, "reason": "ok"})}))
"""


@pytest.mark.slow
def test_trends_flags_composites_from_different_layer_sets(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "p"
    shutil.copytree(project, copy)
    monkeypatch.chdir(copy)
    (copy / "judge.py").write_text(JUDGE)
    assert invoke("eval", "--judge", f"{sys.executable} judge.py:m", "--report-only", columns=None).exit_code == 0
    data = json.loads(invoke("trends", "--json", columns=None).stdout)[0]
    assert data["not_comparable"] == {
        name: ["fact+behavior", "fact+behavior+judge"] for name in ("support-basic", "support-expert")
    }
    text = " ".join(invoke("trends", columns=80).stdout.split())
    assert (
        "⚠ support-expert: composites come from different layer sets (fact+behavior, fact+behavior+judge): "
        "not comparable across those runs"
    ) in text
    assert "composite 4.86 (fact+behavior) ⚠" in text


# --- terminal injection (issue 19 item 10) -------------------------------------------------

OSC8 = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"
OSC0 = "\x1b]0;pwned title\x07"
CSI = "\x1b[2J\x1b[31m"
NASTY = f"{OSC8} {OSC0} {CSI} I'm not sure\rOVERWRITE \u202eevil"
CONTROL = ("\x1b", "\x07", "\r", "\x9b", "\u202e")

HOSTILE_AGENT = f"""\
import json, sys
req = json.load(sys.stdin)
nasty = {NASTY!r}
if "money back" in req["prompt"]:
    print(json.dumps({{"ok": False, "error": "boom " + nasty}}))
else:
    print(json.dumps({{"output": "maybe " + nasty, "toolCalls": [
        {{"tool": "Grep", "input": {{"pattern": "refund" + nasty}}, "output": "No matches found", "success": True}},
        {{"tool": "Read", "input": {{"file_path": "knowledge/" + nasty + ".md"}}, "output": "File does not exist.",
         "success": False}}]}}))
"""


def assert_clean(result: Result, what: str) -> None:
    for stream in (result.stdout, result.stderr):
        for c in CONTROL:
            assert c not in stream, f"{what}: {c!r} printed raw"


@pytest.mark.slow
def test_no_command_prints_control_characters_from_agents_names_or_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "d", columns=80).exit_code == 0
    demo = tmp_path / "d"
    monkeypatch.chdir(demo)
    (demo / "agent.py").write_text(HOSTILE_AGENT)
    hostile_skill = demo / "skills" / f"exp{CSI}ert.md"
    hostile_skill.write_text((demo / "skills" / "support-expert" / "SKILL.md").read_text())
    agent = f"{sys.executable} {demo / 'agent.py'}"
    results = {
        "eval": invoke(
            "eval",
            "--executor",
            agent,
            "--control",
            "support-basic",
            "--treatment",
            str(hostile_skill),
            "--retry",
            "0",
            columns=80,
        ),
        "report": invoke("report", "latest", columns=80),
        "gaps": invoke("gaps", "latest", columns=80),
        "runs": invoke("runs", columns=80),
        "trends": invoke("trends", columns=80),
        "bad input": invoke("eval", "--samples", f"missing{OSC0}.yaml", columns=80),
    }
    assert "boom" in results["eval"].stdout and "\\x1b]0;pwned title\\x07" in results["eval"].stdout
    assert "refund\\x1b]8;;https://evil.example" in results["gaps"].stdout
    assert "exp\\x1b[2J\\x1b[31mert" in results["trends"].stdout
    for what, r in results.items():
        assert_clean(r, what)

    traces = tmp_path / "traces"
    shutil.copytree(HERE.parent / "observe" / "fixtures" / "claude-projects", traces)
    session = next(traces.glob("-home-u-proj/*.jsonl"))
    escaped = json.dumps(NASTY)[1:-1]
    session.write_text(
        session.read_text()
        .replace("revenue_schema", f"rev{escaped}")
        .replace('"skill":"pdf"', f'"skill":"p{escaped}df"')
    )
    observed = invoke("observe", str(traces), "--workers", "1", columns=200)
    assert observed.exit_code == 0 and "rev\\x1b]8;;" in observed.stdout and "p\\x1b]8;;" in observed.stdout
    assert_clean(observed, "observe")


def test_printable_escapes_controls_and_keeps_text() -> None:
    assert printable("a\x1b[31mb\rc\td\ne\x07\u202ef") == "a\\x1b[31mb\\rc\\td\\ne\\x07\\u202ef"
    assert printable("日本語 — ✓ ok") == "日本語 — ✓ ok"
    assert printable_tree({"k\x1b": ["\x9b", 1, None, 2.5, True]}) == {"k\\x1b": ["\\x9b", 1, None, 2.5, True]}
