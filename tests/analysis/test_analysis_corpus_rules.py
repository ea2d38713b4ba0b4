"""Signal rules on real logs of the traces corpus (shared/reference/traces-corpus, read at test
time): each expectation below was checked by reading the log's tool calls and results by hand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from knowmeter.analysis import aggregate_gaps, analyze_task
from knowmeter.traces import ErrorKind, ToolStatus, load_trace

CORPUS = "reference/traces-corpus/tielec"


def _gaps(shared_dir: Path, name: str):
    return analyze_task(load_trace(shared_dir / CORPUS / name), sample_id=name[:12])


def _failed(gaps) -> list[tuple[str | None, str]]:
    return [(s.tool, s.target) for s in gaps.signals if s.source == "failed_search"]


def test_an_empty_pipeline_is_a_failed_search_of_the_stage_that_filtered_everything_out(shared_dir):
    # 445_06 turn 8: `ls -la /usr/bin/ | grep python` printed nothing: the agent looked for python,
    # not for /usr/bin/ (which exists); 475_02 turn 2: `ls -la …/src/ | grep __init__` likewise
    assert ("Bash", "python") in _failed(_gaps(shared_dir, "issue-445_06_testing_execute__6ecd4a33.txt"))
    assert _failed(_gaps(shared_dir, "issue-475_02_design_execute__2a180221.txt")) == [("Bash", "__init__")]


def test_a_crashing_script_fed_by_a_read_is_not_a_failed_search(tb):
    crash = "Traceback (most recent call last):\n  File \"<string>\", line 1\nKeyError: 'items'"
    trace = (
        tb()
        .bash(
            "head -50 data/report.json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"items\"])'",
            crash,
            exit_code=1,
        )
        .bash(
            "cat data/missing.json | python3 -m json.tool",
            "cat: data/missing.json: No such file or directory\nExpecting value: line 1 column 1 (char 0)",
            exit_code=1,
            turn=2,
        )
        .build()
    )
    gaps = analyze_task(trace, sample_id="s")
    # the first read worked (the script failed); the second read itself failed: that stage is the gap
    assert _failed(gaps) == [("Bash", "data/missing.json")]


def test_a_count_of_zero_is_an_empty_search(tb):
    trace = (
        tb()
        .bash("grep -c revenue_schema docs/a.md", "0", exit_code=1)
        .bash("find docs -name '*.sql' | wc -l", "0\n", turn=2)
        .build()
    )
    assert [t for _, t in _failed(analyze_task(trace, sample_id="s"))] == ["revenue_schema", "*.sql"]


def test_globs_without_a_wildcard_collapse_by_folder_like_reads(tb):
    # five exact-path Globs in one message, in two missing folders: two mistakes, not five (a
    # Glob pattern without a wildcard used to get a key ending in "/", which no folder matched)
    b = tb()
    for p in ("docs/api/a.md", "docs/api/b.md", "docs/api/c.md", "src/old/x.py", "src/old/y.py"):
        b.tool("Glob", {"pattern": p}, "No files found", turn=3, kind=ErrorKind.EMPTY_SEARCH)
    gaps = analyze_task(b.build(), sample_id="s")
    assert [(s.target, s.occurrences) for s in gaps.signals if s.source == "failed_search"] == [
        ("docs/api/a.md", 3),
        ("src/old/x.py", 2),
    ]


def test_a_success_of_the_class_in_the_window_spoils_a_repeated_failure(shared_dir):
    # 437_00: Glob jenkins_agent*/**/*.j2 misses in turn 1 beside two Globs that found files, then
    # two Globs miss in turn 3: three failed name searches within turns 1–3, but not all of the
    # window's name searches failed
    gaps = _gaps(shared_dir, "issue-437_00_planning_execute__999e5c6a.txt")
    assert not any(s.source == "repeated_failure" for s in gaps.signals)
    assert Counter(s.source for s in gaps.signals)["failed_search"] == 3


def test_three_parallel_name_searches_that_all_miss_are_a_repeated_failure(shared_dir):
    # 448_01 turn 3: two Globs and one `find -type d -name tests` look for the tests in parallel,
    # all empty: Glob and find are the same class of search (by name)
    gaps = _gaps(shared_dir, "issue-448_01_requirements_execute__8028af96.txt")
    [rf] = [s for s in gaps.signals if s.source == "repeated_failure"]
    assert (rf.tool, rf.turn, len(rf.calls)) == ("name search", 3, 3)
    assert len(_failed(gaps)) == 3


def test_a_retried_command_is_reported_but_outside_the_gap_rate(tb, watermark):
    b = tb()
    for turn in (1, 2, 3):
        b.bash("pytest -x tests/test_a.py", "FAILED tests/test_a.py::test_x - assert 1 == 2", exit_code=1, turn=turn)
    trace = b.build()
    summary = aggregate_gaps([analyze_task(trace, sample_id="s")], watermark)
    assert summary.gap_rate == 0.0 and [s.target for s in summary.retried] == ["pytest"]
    counted = aggregate_gaps([analyze_task(trace, sample_id="s", count_retried_commands=True)], watermark)
    assert counted.gap_rate == 1.0 and counted.weighted_gap_rate == 0.5
    assert counted.signals_by_source["retried_command"] == 1


def test_a_failed_status_without_output_is_still_judged(tb):
    trace = (
        tb()
        .tool(
            "Bash",
            {"command": "ls docs/missing"},
            "ls: cannot access 'docs/missing': No such file or directory",
            status=ToolStatus.FAILURE,
            exit_code=2,
        )
        .build()
    )
    assert _failed(analyze_task(trace, sample_id="s")) == [("Bash", "docs/missing")]


def test_a_search_inside_a_shell_loop_is_judged_like_any_search(shared_dir):
    # 455_06 turn 8: `for file in a.groovy …; do echo … && grep "password('GITHUB_TOKEN'" "$file" |
    # head -1 && …; done` ran from the wrong folder, and `$file` expanded empty: ten times
    # `grep: : No such file or directory`. `for` / `do` / `done` are shell grammar, not programs:
    # the loop body is a grep, and its miss is a failed search (a command bug the spec accepts as
    # noise, labelling rules §1.4)
    gaps = _gaps(shared_dir, "issue-455_06_testing_execute__8a803f09.txt")
    assert ("Bash", "password('GITHUB_TOKEN'") in _failed(gaps)


def test_shell_keywords_are_not_verbs():
    from knowmeter.analysis._commands import parse_command

    loop = parse_command('for f in a.md b.md; do cat "$f"; done')
    assert [s.verb for s in loop.stages] == ["cat"] and loop.is_search
    cond = parse_command("if [ -f a.md ]; then head -3 a.md; else echo none; fi")
    assert [s.verb for s in cond.stages] == ["[", "head", "echo"]
    assert [s.verb for s in parse_command("while read l; do grep -q x a.md; done < list").stages] == [
        "read",
        "grep",
    ]


def test_a_cd_into_a_missing_folder_is_navigation_not_a_failed_search(shared_dir, tb):
    # 455_06 turn 6: `cd jenkins/jobs/dsl/ai-workflow && for file in …; do … grep …; done` failed
    # at the `cd` (a parallel call had already moved the shell there): the grep never ran
    gaps = _gaps(shared_dir, "issue-455_06_testing_execute__8a803f09.txt")
    assert "toolu_01WJLC6p1ZiTPQzF5mMpJNk7" not in {c for s in gaps.signals for c in s.calls}
    assert gaps.excluded.get("navigation") == 1
    trace = tb().bash("cd docs && grep -rn revenue .", "bash: line 1: cd: docs: No such file or directory", exit_code=1)
    assert _failed(analyze_task(trace.build(), sample_id="s")) == []


def test_what_a_command_echoes_itself_is_not_what_its_searches_said():
    from knowmeter.analysis._commands import parse_command

    cmd = parse_command('for f in a b; do echo "=== $f ===" && grep x "$f"; done; ls c || echo "c is gone"')
    out = "=== a ===\ngrep: a: No such file or directory\n===  ===\nls: cannot access 'c'\nc is gone"
    assert cmd.searches_said(out).splitlines() == [
        "grep: a: No such file or directory",
        "ls: cannot access 'c'",
        "c is gone",  # an `|| echo` fallback answers the search: it stays
    ]
