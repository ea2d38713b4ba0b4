"""Spec-by-example: failed searches (spec §4.1), their exclusions, the collapse rule, and
repeated failures (§4.4) — on hand-built IR traces."""

from __future__ import annotations

import pytest

from knowmeter.analysis import analyze_task
from knowmeter.analysis._commands import parse_command
from knowmeter.traces import ErrorKind, ToolStatus


def _signals(trace, source=None, **kw):
    gaps = analyze_task(trace, sample_id="s1", **kw)
    return [s for s in gaps.signals if source is None or s.source == source], gaps


# --- what is a failed search -------------------------------------------------------------------


def test_grep_with_no_matches_is_a_failed_search_with_weight_1(tb):
    sigs, _ = _signals(tb().grep_empty("revenue_schema", turn=4).build())
    assert len(sigs) == 1
    s = sigs[0]
    assert (s.source, s.weight, s.tool, s.target, s.turn) == ("failed_search", 1.0, "Grep", "revenue_schema", 4)
    assert s.context == 'Grep "revenue_schema" → no results'


def test_glob_no_files_found_without_error_kind_still_counts(tb):
    # an adapter that did not classify the result: the text decides
    trace = tb().tool("Glob", {"pattern": "docs/**/*.md"}, "No files found").build()
    sigs, _ = _signals(trace, "failed_search")
    assert [s.tool for s in sigs] == ["Glob"]


def test_grep_with_matches_is_not_a_gap(tb):
    trace = tb().tool("Grep", {"pattern": "banana"}, "fruits.txt:2:banana split").build()
    assert _signals(trace)[0] == []


def test_failed_read_of_a_constructed_path_is_a_gap(tb):
    sigs, _ = _signals(tb().read_missing("/ws/docs/revenue.md").build(), "failed_search")
    assert [(s.tool, s.target) for s in sigs] == [("Read", "/ws/docs/revenue.md")]
    assert sigs[0].context.endswith("→ not found")


@pytest.mark.parametrize("prompt", ["Summarise /ws/docs/revenue.md please", "Summarise docs/revenue.md"])
def test_failed_read_of_a_path_given_in_the_prompt_is_not_a_gap(tb, prompt):
    trace = tb(meta={"cwd": "/ws"}).read_missing("/ws/docs/revenue.md").build()
    sigs, gaps = _signals(trace, prompt_text=prompt, workspace_root="/ws")
    assert sigs == []
    assert gaps.excluded == {"given_path": 1}


def test_a_path_given_in_a_later_user_message_is_not_a_gap(tb):
    trace = (
        tb()
        .say("you have a working env in /tmp/review-tool", role="user")
        .bash(
            "ls /tmp/review-tool",
            "ls: cannot access '/tmp/review-tool': No such file or directory",
            exit_code=2,
            kind=ErrorKind.NOT_FOUND,
        )
        .build()
    )
    assert _signals(trace)[0] == []


def test_read_failing_for_another_reason_is_not_a_gap(tb):
    trace = (
        tb()
        .tool(
            "Read",
            {"file_path": "big.log"},
            "File content (85812 tokens) exceeds maximum allowed tokens",
            status=ToolStatus.FAILURE,
            kind=ErrorKind.TOOL_MISUSE,
        )
        .build()
    )
    sigs, gaps = _signals(trace)
    assert sigs == [] and gaps.excluded == {"tool_misuse": 1}


@pytest.mark.parametrize(
    ("command", "output", "code"),
    [
        ("grep -rn kiwi .", "", 1),
        ("rg -n 'revenue_schema' docs", "", 1),
        ("find . -name '*.schema.json'", "", 0),
        ("cat missing.txt", "cat: missing.txt: No such file or directory", 1),
        ("ls docs", "ls: cannot access 'docs': No such file or directory", 2),
        ("bash -lc 'grep -rn kiwi .'", "", 1),
        ("ls -la /tmp/venv/bin/ | head -20", "ls: cannot access '/tmp/venv/bin/': No such file or directory", 0),
    ],
)
def test_bash_searches_with_empty_output_or_nonzero_exit_are_gaps(tb, command, output, code):
    sigs, _ = _signals(tb().bash(command, output, exit_code=code).build(), "failed_search")
    assert len(sigs) == 1 and sigs[0].tool == "Bash"
    assert command.split()[0] in sigs[0].context or "grep" in sigs[0].context


def test_bash_search_that_finds_something_is_not_a_gap(tb):
    assert _signals(tb().bash("grep -rn banana .", "./fruits.txt:2:banana split").build())[0] == []


def test_a_match_line_that_mentions_no_such_file_is_not_mistaken_for_an_error(tb):
    out = "./notes.md:3:No such file or directory errors mean the path is wrong"
    assert _signals(tb().bash("grep -rn 'No such file' .", out).build())[0] == []


@pytest.mark.parametrize(
    "command",
    ["npm test", "uv run pytest && cat .crash.log", "ls && echo oops >&2 && exit 3", "sed -i 's/a/b/' notes.md"],
)
def test_non_search_bash_failures_are_not_gaps(tb, command):
    assert _signals(tb().bash(command, "boom", exit_code=1).build())[0] == []


def test_exit_127_is_an_environment_gap_not_a_knowledge_gap(tb):
    trace = tb().bash("rg --files -g'*ssm-backup*.md'", "bash: line 1: rg: command not found", exit_code=127).build()
    sigs, gaps = _signals(trace)
    assert sigs == [] and gaps.excluded == {"command_missing": 1}


def test_exit_code_alone_decides_when_the_adapter_gave_no_error_kind(tb):
    trace = (
        tb()
        .tool("Bash", {"command": "grep -r x ."}, "", status=ToolStatus.FAILURE, exit_code=127)
        .tool("Bash", {"command": "grep -r y ."}, "", status=ToolStatus.FAILURE, exit_code=124)
        .build()
    )
    sigs, gaps = _signals(trace)
    assert sigs == [] and gaps.excluded == {"command_missing": 1, "timeout": 1}


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (ErrorKind.PERMISSION_DENIED, ToolStatus.FAILURE),
        (ErrorKind.USER_REJECTED, ToolStatus.FAILURE),
        (ErrorKind.CANCELLED_SIBLING, ToolStatus.CANCELLED),
        (ErrorKind.TOOL_MISUSE, ToolStatus.FAILURE),
        (ErrorKind.API_ERROR, ToolStatus.FAILURE),
        (ErrorKind.TIMEOUT, ToolStatus.FAILURE),
    ],
)
@pytest.mark.parametrize("tool", ["Grep", "Read", "Bash"])
def test_harness_failures_are_never_gaps(tb, kind, status, tool):
    inp = {"command": "grep -r x ."} if tool == "Bash" else {"pattern": "x", "file_path": "x.md"}
    trace = tb().tool(tool, inp, "whatever", status=status, kind=kind).build()
    sigs, gaps = _signals(trace)
    assert sigs == []
    assert gaps.excluded == {kind.value: 1}


def test_failed_web_search_is_a_gap_but_a_network_error_is_not(tb):
    trace = (
        tb()
        .tool("WebSearch", {"query": "acme revenue schema"}, "", turn=1)
        .tool(
            "WebSearch",
            {"query": "other thing"},
            "API Error: 529",
            status=ToolStatus.FAILURE,
            kind=ErrorKind.API_ERROR,
            turn=2,
        )
        .build()
    )
    sigs, _ = _signals(trace, "failed_search")
    assert [(s.tool, s.target) for s in sigs] == [("WebSearch", "acme revenue schema")]


def test_non_search_tools_are_ignored(tb):
    trace = (
        tb()
        .tool("Edit", {"file_path": "a.py"}, "String to replace not found", status=ToolStatus.FAILURE)
        .tool("Write", {"file_path": "b.py"}, "", status=ToolStatus.FAILURE)
        .build()
    )
    sigs, gaps = _signals(trace)
    assert sigs == [] and gaps.excluded == {}


def test_a_call_without_result_is_not_judged(tb):
    assert _signals(tb().tool("Grep", {"pattern": "x"}, result=False).build())[0] == []


def test_note_is_the_agents_next_sentence(tb):
    trace = (
        tb()
        .grep_empty("revenue_schema", turn=4)
        .say("Need to verify which domain the revenue field definitions live in. Trying again.", turn=5)
        .build()
    )
    sig = _signals(trace, "failed_search")[0][0]
    assert sig.note == "Need to verify which domain the revenue field definitions live in."


# --- collapsing similar consecutive failures ----------------------------------------------------


def test_consecutive_failures_for_the_same_pattern_collapse(tb):
    trace = (
        tb()
        .grep_empty("revenue_schema", 1)
        .grep_empty("revenue_schema|revenueSchema", 2)
        .bash("rg -n revenue_schema", "", exit_code=1, turn=3)
        .build()
    )
    sigs, _ = _signals(trace, "failed_search")
    assert len(sigs) == 1 and sigs[0].occurrences == 3 and sigs[0].turn == 1


def test_different_targets_stay_separate(tb):
    trace = tb().grep_empty("revenue_schema", 1).grep_empty("user_profile", 2).build()
    assert [s.target for s in _signals(trace, "failed_search")[0]] == ["revenue_schema", "user_profile"]


def test_a_successful_search_in_between_breaks_the_run(tb):
    trace = (
        tb()
        .grep_empty("revenue_schema", 1)
        .tool("Grep", {"pattern": "revenue"}, "a.md:1:revenue", turn=2)
        .grep_empty("revenue_schema", 3)
        .build()
    )
    sigs = _signals(trace, "failed_search")[0]
    assert [s.occurrences for s in sigs] == [1, 1]


def test_excluded_failures_in_between_do_not_break_the_run(tb):
    trace = (
        tb()
        .grep_empty("revenue_schema", 1)
        .tool(
            "Bash",
            {"command": "find / -name x"},
            "requires approval",
            status=ToolStatus.FAILURE,
            kind=ErrorKind.PERMISSION_DENIED,
            turn=2,
        )
        .grep_empty("revenue_schema", 3)
        .build()
    )
    assert [s.occurrences for s in _signals(trace, "failed_search")[0]] == [2]


def test_paths_collapse_when_one_is_inside_the_other_or_they_name_the_same_file(tb):
    trace = (
        tb(meta={"cwd": "/ws"})
        .read_missing("/ws/lib/web/session_live.html.heex", 1)
        .tool("Glob", {"pattern": "**/*session_live.html.heex"}, "No files found", turn=2, kind=ErrorKind.EMPTY_SEARCH)
        .bash("ls /tmp/venv/bin/", "ls: cannot access '/tmp/venv/bin/': No such file or directory", exit_code=2, turn=3)
        .bash("ls -la /tmp/venv/bin/python*", "ls: cannot access: No such file or directory", exit_code=2, turn=4)
        .build()
    )
    sigs = _signals(trace, "failed_search", workspace_root="/ws")[0]
    assert [(s.tool, s.occurrences) for s in sigs] == [("Read", 2), ("Bash", 2)]


def test_paths_that_merely_share_a_directory_do_not_collapse(tb):
    trace = (
        tb()
        .read_missing("/ws/docs/a.md", 1)
        .read_missing("/ws/docs/b.md", 2)
        .tool("Glob", {"pattern": "src/**/*.py"}, "No files found", turn=3)
        .tool("Glob", {"pattern": "src/**/*.ts"}, "No files found", turn=4)
        .build()
    )
    assert len(_signals(trace, "failed_search")[0]) == 4


def test_subagents_have_their_own_runs(tb):
    trace = (
        tb()
        .tool("Grep", {"pattern": "x_key"}, "No matches found", agent_id="a1")
        .tool("Grep", {"pattern": "x_key"}, "No matches found", agent_id="a2")
        .build()
    )
    assert [s.occurrences for s in _signals(trace, "failed_search")[0]] == [1, 1]


# --- repeated failure -----------------------------------------------------------------------------


def test_three_failures_of_one_tool_class_within_three_turns_is_a_repeated_failure(tb):
    trace = tb().grep_empty("alpha", 2).grep_empty("beta", 3).grep_empty("gamma", 4).build()
    sigs = _signals(trace, "repeated_failure")[0]
    assert len(sigs) == 1
    assert (sigs[0].weight, sigs[0].tool, sigs[0].turn) == (1.0, "content search", 2)
    assert "3× in turns 2–4" in sigs[0].context


def test_three_failures_spread_over_four_turns_are_not(tb):
    trace = tb().grep_empty("alpha", 1).grep_empty("beta", 2).grep_empty("gamma", 4).build()
    assert _signals(trace, "repeated_failure")[0] == []


def test_parallel_failures_in_one_turn_count_one_each(tb):
    # spec §4.4: >= 3 calls of one class within 3 consecutive turns, all failed — calls, not turns
    trace = tb().grep_empty("alpha", 5).grep_empty("beta", 5).grep_empty("gamma", 5).build()
    [signal] = _signals(trace, "repeated_failure")[0]
    assert "3× in turns 5–5" in signal.context
    trace = tb().grep_empty("alpha", 5).grep_empty("beta", 5).build()
    assert _signals(trace, "repeated_failure")[0] == []


def test_a_success_of_the_same_class_resets_the_count(tb):
    trace = (
        tb()
        .grep_empty("alpha", 1)
        .grep_empty("beta", 1)
        .tool("Grep", {"pattern": "delta"}, "a.md:1:delta", turn=2)
        .grep_empty("gamma", 2)
        .build()
    )
    assert _signals(trace, "repeated_failure")[0] == []


def test_different_tool_classes_do_not_add_up(tb):
    trace = tb().grep_empty("alpha", 1).read_missing("x.md", 1).grep_empty("beta", 2).read_missing("y.md", 2).build()
    assert _signals(trace, "repeated_failure")[0] == []


def test_one_repeated_failure_per_run_however_long(tb):
    b = tb()
    for i in range(8):
        b.grep_empty(f"term{i}", i + 1)
    assert len(_signals(b.build(), "repeated_failure")[0]) == 1


def test_denied_retries_are_failed_attempts_of_a_repeated_failure_but_no_failed_searches(tb):
    b = tb()
    for i in range(3):
        b.tool(
            "Bash",
            {"command": f"find / -name x{i}"},
            "requires approval",
            status=ToolStatus.FAILURE,
            kind=ErrorKind.PERMISSION_DENIED,
            turn=i + 1,
        )
    signals = _signals(b.build())[0]
    assert [(s.source, s.tool, len(s.calls)) for s in signals] == [("repeated_failure", "name search", 3)]


# --- the shell parser behind "is this Bash call a search" ---------------------------------------


@pytest.mark.parametrize(
    ("command", "is_search", "target"),
    [
        ("grep -rn -A 3 revenue_schema docs/", True, ("pattern", "revenue_schema")),
        ("rg -e 'a|b' -g '*.md'", True, ("pattern", "a|b")),
        ("cd /repo && rg --files -g'*ssm*.md'", True, ("pattern", "*ssm*.md")),
        ("find docs -name '*.schema.json' -type f | head -5", True, ("pattern", "*.schema.json")),
        ("head -n 20 knowledge/refunds.md", True, ("path", "knowledge/refunds.md")),
        ("sed -n '1,40p' docs/a.md", True, ("path", "docs/a.md")),
        ("cat @.ai-workflow/x.md 2>/dev/null", True, ("path", "@.ai-workflow/x.md")),
        ("PYTHONPATH=. python -c 'print(1)'", False, None),
        ("git grep -n foo", True, ("pattern", "foo")),
        ("make test", False, None),
    ],
)
def test_shell_parsing(command, is_search, target):
    cmd = parse_command(command)
    assert cmd.is_search is is_search
    if target is not None:
        assert cmd.target() == target


@pytest.mark.parametrize(
    "command", ["cat a.md > b.md", "ls docs > listing.txt", "cat > notes.md <<'EOF'\nls missing\ngrep nothing\nEOF"]
)
def test_writing_a_file_with_cat_or_ls_is_not_a_search(tb, command):
    assert not parse_command(command).is_search
    assert _signals(tb().bash(command, "").build())[0] == []


def test_a_quiet_grep_is_judged_by_its_exit_code_not_its_empty_output(tb):
    trace = (
        tb()
        .bash("grep -q revenue_schema docs/a.md", "", exit_code=0)
        .bash("grep -rq user_profile docs", "", exit_code=1, kind=ErrorKind.EMPTY_SEARCH)
        .build()
    )
    assert [s.target for s in _signals(trace, "failed_search")[0]] == ["user_profile"]


def test_read_paths_of_a_command():
    assert parse_command("cat a.md b.md | grep x; head -n 3 c.md; sed -n '1p' d.md").read_paths() == [
        "a.md",
        "b.md",
        "c.md",
        "d.md",
    ]
    assert parse_command("grep x a.md | head -3").read_paths() == ["a.md"]  # its matching lines
    assert parse_command("grep -l x a.md b.md; rg -c x c.md").read_paths() == []  # names, counts
    assert parse_command("cat a.md > copy.md").read_paths() == []


# --- real format: a batch of reads in one missing folder (cut from the spotter subagent) --------


def _missing_folder_reads(shared_dir, batches: list[int]):
    """The spotter subagent's real Read call and its "File does not exist." result, cloned: one
    Read per entry of ``batches`` into ``lib/spotter_web/components/transcript/`` (a folder that
    does not exist), the entry's number naming its API message (one number = one parallel batch)."""
    import json

    from knowmeter.traces import parse_claude_session

    path = (
        shared_dir
        / "reference"
        / "traces"
        / "claude-code-session-jsonl"
        / "4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    call = json.loads(lines[6])
    result = json.loads(lines[7])
    assert result["toolUseResult"] == "Error: File does not exist."
    out = []
    for n, batch in enumerate(batches):
        cid = f"toolu_clone{n}"
        c = json.loads(json.dumps(call))
        c["uuid"], c["message"]["id"] = f"call-{n}", f"msg_batch{batch}"
        c["message"]["content"][0].update(
            id=cid, input={"file_path": f"{call['cwd']}/lib/spotter_web/components/transcript/part_{n}.ex"}
        )
        r = json.loads(json.dumps(result))
        r["uuid"], r["message"]["content"][0]["tool_use_id"] = f"result-{n}", cid
        out += [json.dumps(c), json.dumps(r)]
    return parse_claude_session(out, agent_id="a2898e3")


def test_five_parallel_reads_in_one_missing_folder_are_one_failed_search_and_a_repeated_failure(shared_dir):
    trace = _missing_folder_reads(shared_dir, [1, 1, 1, 1, 1])
    gaps = analyze_task(trace, sample_id="s", workspace_root=trace.meta["cwd"])
    # one event (collapsed), and five failed Reads in one turn are >= 3 failed calls of one class
    assert [(s.source, s.occurrences) for s in gaps.signals] == [("failed_search", 5), ("repeated_failure", 1)]
    trace = _missing_folder_reads(shared_dir, [1, 1])
    gaps = analyze_task(trace, sample_id="s", workspace_root=trace.meta["cwd"])
    assert [(s.source, s.occurrences) for s in gaps.signals] == [("failed_search", 2)]


def test_the_same_folder_failing_in_three_turns_is_a_repeated_failure(shared_dir):
    trace = _missing_folder_reads(shared_dir, [1, 2, 3])
    gaps = analyze_task(trace, sample_id="s", workspace_root=trace.meta["cwd"])
    by = {s.source: s for s in gaps.signals}
    # across turns, files of one folder stay separate gaps (the agent saw the failure and tried again)
    assert sum(1 for s in gaps.signals if s.source == "failed_search") == 3
    assert "repeated_failure" in by and "turns 1–3" in by["repeated_failure"].context


@pytest.mark.parametrize(
    ("command", "action"),
    [
        ("python -m pytest tests/unit/ -v", "Bash pytest"),
        ("uv run python -m pytest -x", "Bash pytest"),
        ("cd app && poetry run pytest", "Bash pytest"),
        ("npx --yes prettier --check .", "Bash prettier"),
        ("python3 -m pip install -r req.txt", "Bash pip install"),
        ("python script.py", "Bash python"),
        ("uv sync", "Bash uv sync"),
    ],
)
def test_a_launcher_is_not_the_action_of_a_retried_command(tb, command, action):
    from knowmeter.analysis._retries import action_key

    inv = tb().bash(command, "boom", exit_code=1).build().invocations()[0]
    assert action_key(inv) == action
