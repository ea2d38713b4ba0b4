"""Result classification (FORMATS.md §1.4 and §5): real wordings → (status, error_kind, exit code)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowmeter.traces import ErrorKind, ToolStatus, classify_result
from knowmeter.traces import _status as status_module
from knowmeter.traces._status import command_verbs, exit_code_from_text, unwrap_shell

S, F, C = ToolStatus.SUCCESS, ToolStatus.FAILURE, ToolStatus.CANCELLED
K = ErrorKind

CASES: list[tuple[str, str, dict[str, Any], ToolStatus, ErrorKind | None, int | None]] = [
    # empty searches are not errors in Claude Code
    ("Grep", "No matches found", {"is_error": False}, S, K.EMPTY_SEARCH, None),
    ("Grep", "No files found", {"is_error": False}, S, K.EMPTY_SEARCH, None),
    (
        "Grep",
        "No matches found\n\nFound 0 total occurrences across 0 files.",
        {"is_error": False},
        S,
        K.EMPTY_SEARCH,
        None,
    ),
    (
        "Grep",
        "20\n\nFound 0 total occurrences across 0 files.",
        {"is_error": False, "structured": {"mode": "count", "numMatches": 0}},
        S,
        None,
        None,
    ),  # trust the text
    (
        "Grep",
        "fruits.txt:2:banana split",
        {"is_error": False, "structured": {"mode": "content", "numFiles": 0, "numLines": 1}},
        S,
        None,
        None,
    ),
    (
        "Grep",
        "",
        {"is_error": False, "structured": {"mode": "content", "numFiles": 0, "content": "", "numLines": 0}},
        S,
        K.EMPTY_SEARCH,
        None,
    ),
    ("Glob", "No files found", {"is_error": False}, S, K.EMPTY_SEARCH, None),
    (
        "Glob",
        "<tool_use_error>Directory does not exist: .ai-workflow/prompts</tool_use_error>",
        {"is_error": True},
        F,
        K.NOT_FOUND,
        None,
    ),
    # Read of a missing file, every wording
    ("Read", "<tool_use_error>File does not exist.</tool_use_error>", {"is_error": True}, F, K.NOT_FOUND, None),
    (
        "Read",
        "File does not exist. Note: your current working directory is /home/u/x.",
        {"is_error": True},
        F,
        K.NOT_FOUND,
        None,
    ),
    (
        "Read",
        "File does not exist.",
        {"is_error": True, "structured": "Error: File does not exist."},
        F,
        K.NOT_FOUND,
        None,
    ),
    ("Read", "ENOENT: no such file or directory, open '/x'", {"is_error": True}, F, K.NOT_FOUND, None),
    (
        "Read",
        "File content (85812 tokens) exceeds maximum allowed tokens (25000). Please use offset",
        {"is_error": True},
        F,
        K.TOOL_MISUSE,
        None,
    ),
    ("Read", "     1→no error here: This command requires approval", {"is_error": False}, S, None, None),
    # Bash exit codes (Claude 2.1.x prefixes the text with "Exit code N")
    (
        "Bash",
        "Exit code 3\nfruits.txt\nnotes.md\noops",
        {"is_error": True, "command": "ls && exit 3"},
        F,
        K.NONZERO_EXIT,
        3,
    ),
    (
        "Bash",
        "Exit code 127\n/bin/bash: line 1: /tmp/venv/bin/python: No such file or directory",
        {"is_error": True},
        F,
        K.COMMAND_MISSING,
        127,
    ),
    ("Bash", "Exit code 1", {"is_error": True, "command": "grep -rn kiwi ."}, F, K.EMPTY_SEARCH, 1),
    ("Bash", "Exit code 1", {"is_error": True, "command": "cd src && rg -n kiwi | head -5"}, F, K.NONZERO_EXIT, 1),
    ("Bash", "Exit code 1", {"is_error": True, "command": "cd src && rg -n kiwi"}, F, K.EMPTY_SEARCH, 1),
    (
        "Bash",
        "Exit code 2\ngrep: x: No such file or directory",
        {"is_error": True, "command": "grep a x"},
        F,
        K.NOT_FOUND,
        2,
    ),
    (
        "Bash",
        "Exit code 1\n/bin/bash: line 1: cd: /tmp/review-tool: No such file or directory",
        {"is_error": True, "command": "cd /tmp/review-tool && make"},
        F,
        K.NOT_FOUND,
        1,
    ),
    ("Bash", "Exit code 124", {"is_error": True}, F, K.TIMEOUT, 124),
    ("Bash", "oops", {"is_error": True, "structured": "Error: Exit code 5\noops"}, F, K.NONZERO_EXIT, 5),
    ("Bash", "/bin/bash: line 1: gh: command not found", {"is_error": True}, F, K.COMMAND_MISSING, None),  # 2.0.x
    (
        "Bash",
        "(Bash completed with no output)",
        {"is_error": False, "command": "find . -name '*.md'"},
        S,
        K.EMPTY_SEARCH,
        None,
    ),
    ("Bash", "./a.md", {"is_error": False, "command": "find . -name '*.md'"}, S, None, None),
    ("Bash", "", {"exit_code": 0, "command": "grep -q x f"}, S, None, 0),
    (
        "Bash",
        "/bin/bash: line 1: created.txt: Read-only file system",
        {"exit_code": 1, "command": "echo hi > created.txt"},
        F,
        K.PERMISSION_DENIED,
        1,
    ),
    (
        "Bash",
        "exec command rejected: dangerous command detected; rejected by user approval settings",
        {"exit_code": -1, "command": "rm -rf node_modules"},
        F,
        K.PERMISSION_DENIED,
        -1,
    ),
    # harness events: never knowledge gaps
    (
        "Read",
        "<tool_use_error>Sibling tool call errored</tool_use_error>",
        {"is_error": True},
        C,
        K.CANCELLED_SIBLING,
        None,
    ),
    (
        "Bash",
        "This Bash command contains multiple operations. The following part requires approval: find /",
        {"is_error": True},
        F,
        K.PERMISSION_DENIED,
        None,
    ),
    ("Bash", "This command requires approval", {"is_error": True}, F, K.PERMISSION_DENIED, None),
    (
        "Bash",
        "touch in '/w/x.txt' was blocked. For security, Claude Code may only create or modify files in "
        "the allowed working directories",
        {"is_error": True},
        F,
        K.PERMISSION_DENIED,
        None,
    ),
    ("Bash", "PreToolUse:Bash hook error: [guard.sh]: blocked", {"is_error": True}, F, K.PERMISSION_DENIED, None),
    (
        "Edit",
        "The user doesn't want to proceed with this tool use. The tool use was rejected",
        {"is_error": True},
        F,
        K.USER_REJECTED,
        None,
    ),
    ("Edit", "User rejected tool use", {"is_error": True}, F, K.USER_REJECTED, None),
    (
        "Grep",
        "<tool_use_error>Error: No such tool available: Grep. Grep is not available in this session</tool_use_error>",
        {"is_error": True},
        F,
        K.TOOL_MISUSE,
        None,
    ),
    (
        "Edit",
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
        {"is_error": True},
        F,
        K.TOOL_MISUSE,
        None,
    ),
    (
        "Edit",
        "<tool_use_error>InputValidationError: Edit failed due to the following issue</tool_use_error>",
        {"is_error": True},
        F,
        K.TOOL_MISUSE,
        None,
    ),
    (
        "Edit",
        "<tool_use_error>String to replace not found in file.\nString: foo</tool_use_error>",
        {"is_error": True},
        F,
        K.TOOL_MISUSE,
        None,
    ),
    ("Task", "API Error: 529 overloaded", {"is_error": True}, F, K.API_ERROR, None),
    ("Edit", "apply_patch verification failed: context not found", {}, F, K.TOOL_MISUSE, None),
    ("Edit", "Success. Updated the following files:\nM a.py", {}, S, None, None),
    ("WebFetch", "Request failed with status code 404", {"is_error": True}, F, K.OTHER, None),
]


@pytest.mark.parametrize(
    ("tool", "text", "kw", "status", "kind", "code"), CASES, ids=[f"{c[0]}:{c[1][:40]}" for c in CASES]
)
def test_classify_result(
    tool: str, text: str, kw: dict[str, Any], status: ToolStatus, kind: ErrorKind | None, code: int | None
) -> None:
    outcome = classify_result(tool, text, **kw)
    assert (outcome.status, outcome.error_kind, outcome.exit_code) == (status, kind, code)


@pytest.mark.parametrize(
    ("command", "verbs"),
    [
        ("cd x && grep y | head", ["cd", "grep", "head"]),
        ('grep "a|b" file', ["grep"]),
        ("git grep foo", ["git-grep"]),
        ("ls > out.txt", ["ls"]),
        ("grep x f 2>/dev/null", ["grep"]),
        ("PYTHONPATH=/a/b /tmp/venv/bin/python -c 'x'", ["python"]),
        ("for f in *; do cat $f; done", ["for", "cat"]),
        ("sudo rg x", ["rg"]),
        ('echo "unbalanced', ["echo"]),
    ],
)
def test_command_verbs(command: str, verbs: list[str]) -> None:
    assert command_verbs(command) == verbs


def test_unwrap_shell_and_exit_line() -> None:
    assert unwrap_shell("/bin/bash -lc 'grep -rn banana .'") == "grep -rn banana ."
    assert unwrap_shell("bash -lc \"rg --files -g'*ssm*.md'\"") == "rg --files -g'*ssm*.md'"
    assert unwrap_shell("bash -lc ls") == "ls"
    assert unwrap_shell(["bash", "-lc", "echo hi"]) == "echo hi"
    assert unwrap_shell(["ls", "-la", "my dir"]) == "ls -la 'my dir'"
    assert unwrap_shell("make test") == "make test"
    assert exit_code_from_text("Exit code 2\nboom") == 2
    assert exit_code_from_text("Error: Exit code 127\n…") == 127
    assert exit_code_from_text("exit code 2") is None


_CASELESS = {name: p for name, p in vars(status_module).items() if isinstance(p, status_module._Caseless)}


def test_caseless_sources_are_lowercase() -> None:
    """The fast path lowercases the text, so a pattern letter in upper case could never match there."""
    assert len(_CASELESS) >= 8
    for name, p in _CASELESS.items():
        source = p._exact.pattern
        assert re.sub(r"\\.", "", source) == re.sub(r"\\.", "", source).lower(), name


# matches of every pattern (in any case, some with non-ASCII case variants), glued to other text
_PIECES = st.one_of(
    *(st.from_regex(p._exact, fullmatch=True) for p in _CASELESS.values()),
    st.sampled_from([" ", "\n", ":", ".", "x", "İ", "ı", "ſ", "\u212a", "é", "ẞ"]),
)


@given(st.lists(_PIECES, max_size=6).map("".join))
@pytest.mark.slow
def test_caseless_search_is_the_re_ignorecase_search(text: str) -> None:
    """Lowercased ASCII text searched case-sensitively finds exactly what ``re.I`` finds."""
    folded = status_module._fold(text)
    assert (folded is not None) == text.isascii()
    for name, p in _CASELESS.items():
        expected = re.compile(p._exact.pattern, re.I).search(text) is not None
        assert p.search(text, folded) == expected, (name, text)


@pytest.mark.parametrize(
    "text",
    [
        "Sibling tool call errored",
        "SIBLING TOOL CALL ERRORED",
        "Permission to use Bash has been denied",
        "PreToolUse:Bash hook error: no",
        "İnputValidationError",
        "No ſuch file or directory",
        "ENOENT",
        "enoent: x",
    ],
)
def test_harness_wordings_in_any_case(text: str) -> None:
    outcome = classify_result("Read", text, is_error=True)
    assert outcome.status is not ToolStatus.SUCCESS and outcome.error_kind not in (None, ErrorKind.OTHER), text


@pytest.mark.parametrize(
    ("tool", "kw"),
    [
        ("Read", {"is_error": False}),
        ("Edit", {"exit_code": 0, "is_error": False}),
        ("mcp__x", {"is_error": False, "exit_code": None}),
    ],
)
def test_plain_success_is_decided_without_the_text(tool: str, kw: dict[str, Any]) -> None:
    """Even a harness wording in the text does not make a result the source called a success fail."""
    assert classify_result(tool, "Sibling tool call errored", **kw) == (ToolStatus.SUCCESS, None, None)


def test_flag_or_exit_code_still_classifies_by_text() -> None:
    assert (
        classify_result("Edit", "File has not been read yet", is_error=False, exit_code=2).error_kind
        is ErrorKind.TOOL_MISUSE
    )
    assert classify_result("Edit", "File has not been read yet").error_kind is ErrorKind.TOOL_MISUSE  # no flag
    assert classify_result("Glob", "No files found", is_error=False).error_kind is ErrorKind.EMPTY_SEARCH
