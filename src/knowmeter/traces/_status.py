"""One place that decides what a tool result means: (ToolStatus, ErrorKind, exit code).

``status`` mirrors what the source said (Claude ``is_error``, Codex ``status: failed`` / a non-zero
exit); ``error_kind`` says why, following reference/traces/FORMATS.md §1.4 and §5:

- Grep "No matches found" / Glob "No files found" are SUCCESS with ``EMPTY_SEARCH`` (Claude Code
  does not flag them as errors); ``grep``/``rg`` exiting 1 in a shell is a FAILURE with ``EMPTY_SEARCH``.
- A missing file or directory (every Read wording, Glob "Directory does not exist", ``cat: x: No
  such file or directory``) is ``NOT_FOUND``; exit 127 is ``COMMAND_MISSING``; exit 124 ``TIMEOUT``;
  any other non-zero exit ``NONZERO_EXIT``.
- Harness events are never knowledge gaps: "Sibling tool call errored" (CANCELLED), permission
  denials, sandbox and hook blocks, user rejections, tool misuse, API errors.
"""

from __future__ import annotations

import functools
import re
import shlex
from typing import Any, NamedTuple

from knowmeter.traces._ir import ErrorKind, ToolStatus

SHELL_TOOLS = frozenset({"Bash"})
SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS"})

_HEAD = 600  # harness messages are short and come first; never scan a whole tool output for them
_TEXT_TOOLS = SHELL_TOOLS | SEARCH_TOOLS  # tools whose successful results are classified by their text


class _Caseless:
    """A case-insensitive pattern that searches ASCII text (nearly all tool output) lowercased with
    a case-sensitive compile of the same all-lowercase source: the same answer, several times
    faster, since ``re.I`` alternations cannot skip ahead to where a match could start. Other text
    is searched with ``re.I``."""

    __slots__ = ("_exact", "_folded")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._folded = re.compile(source, flags)
        self._exact = re.compile(source, flags | re.I)

    def search(self, text: str, folded: str | None) -> bool:
        """Whether the pattern occurs in ``text``; ``folded`` is ``_fold(text)``."""
        if folded is not None:
            return self._folded.search(folded) is not None
        return self._exact.search(text) is not None


def _fold(text: str) -> str | None:
    """``text`` lowercased when it is ASCII (what ``_Caseless`` searches fast), else None."""
    return text.lower() if text.isascii() else None


# Sources are all lowercase (but for escapes such as \S): see _Caseless.
_CANCELLED = _Caseless(r"sibling tool call errored|\[request interrupted by user")
_PERMISSION = _Caseless(
    r"requires approval|was blocked|rejected by user approval settings|dangerous command detected"
    r"|permission to use \S+ (?:has been|was) denied|haven't granted it|blocked by (?:a |the )?hook"
    r"|hook (?:blocked|denied)|pretooluse:\S+ hook error|denied by (?:policy|the sandbox|sandbox)"
    r"|permission denied by"
)
_USER_REJECTED = _Caseless(
    r"the user doesn't want to (?:proceed|take this action)|user rejected tool use"
    r"|rejected by (?:the )?user\b|aborted by user"
)
_MISUSE = _Caseless(
    r"no such tool available|file has not been read yet|inputvalidationerror|invalid tool parameters"
    r"|string to replace not found|no changes to make|matches of the string to replace"
    r"|exceeds maximum allowed|eisdir|apply_patch verification failed|unsupported call|unknown tool"
)
_API_ERROR = _Caseless(r"^api error\b")
# the tool's own sandbox could not start it (codex 0.169's bubblewrap, bwrap's own errors)
_SANDBOX = _Caseless(
    r"^error building bubblewrap command|^bwrap: |^failed to (?:spawn|start|create) (?:the )?sandbox"
    r"|^sandbox (?:setup|initiali[sz]ation) failed|codex-linux-sandbox"
)
_TIMEOUT = _Caseless(r"\btimed out\b|\btimeout exceeded\b")
_NOT_FOUND = _Caseless(
    r"file does not exist|directory does not exist|path does not exist|no such file or directory"
    r"|cannot access|enoent|does not exist\."
)
_OS_PERMISSION = re.compile(r": (?:Permission denied|Read-only file system|Operation not permitted)\s*$", re.M)
_COMMAND_MISSING = _Caseless(r"command not found")
# "<program>: …" / "/bin/bash: line 3: …" — an error line and the program that wrote it
_PROGRAM_ERROR = re.compile(r"^(?:\S*/)?([\w.+-]+)(?:: line \d+)?: (.*)$", re.M)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_EXIT_LINE = re.compile(r"^(?:Error: )?Exit code:? (-?\d+)")
_TAG = re.compile(r"</?tool_use_error>")
_SHELL_WRAPPER = re.compile(r"^\s*(?:/usr)?(?:/bin/)?(?:ba|z|da)?sh\s+-l?c\s+")
_OPERATOR_CHARS = frozenset("&|;()<>")

_SEARCH_VERBS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})
_LISTING_VERBS = frozenset({"find", "fd", "fdfind", "locate"})
# words that stand before or around a command without being its program
_NOT_VERBS = frozenset(
    {
        "sudo",
        "env",
        "time",
        "nice",
        "command",
        "exec",
        "xargs",
        "do",
        "then",
        "else",
        "elif",
        "if",
        "while",
        "until",
        "!",
        "{",
        "}",
        "done",
        "fi",
        "esac",
    }
)


class Outcome(NamedTuple):
    """A classified tool result."""

    status: ToolStatus
    error_kind: ErrorKind | None
    exit_code: int | None


_SUCCESS = Outcome(ToolStatus.SUCCESS, None, None)


def unwrap_shell(command: str | list[str] | None) -> str:
    """The script a shell call ran: ``/bin/bash -lc 'grep x .'`` → ``grep x .``; argv lists are joined."""
    if command is None:
        return ""
    if isinstance(command, list):
        argv = [str(a) for a in command]
        if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh", "dash") and argv[1] in ("-lc", "-c"):
            return argv[2]
        return shlex.join(argv)
    m = _SHELL_WRAPPER.match(command)
    if m:
        try:
            parts = shlex.split(command[m.end() :])
        except ValueError:
            return command
        if len(parts) == 1:
            return parts[0]
    return command


def command_verbs(command: str) -> list[str]:
    """The program names of each simple command in a shell script (``cd x && grep y | head`` →
    ``["cd", "grep", "head"]``), skipping ``VAR=…`` assignments and wrappers such as ``sudo``."""
    lexer = shlex.shlex(command.replace("\n", ";"), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace words
        tokens = re.split(r"\s+|(&&|\|\||[;|&()])", command)
    verbs: list[str] = []
    at_start = True
    redirect_target = False
    for tok in tokens:
        if not tok:
            continue
        if tok[0] in _OPERATOR_CHARS:
            redirect_target = tok[0] in "<>"
            at_start = at_start or not redirect_target
            continue
        if redirect_target:
            redirect_target = False
            continue
        if not at_start or tok in _NOT_VERBS or tok.startswith("-") or "=" in tok.split("/", 1)[0]:
            if not at_start and verbs and verbs[-1] == "git" and tok == "grep":
                verbs[-1] = "git-grep"
            continue
        verbs.append(tok.rsplit("/", 1)[-1])
        at_start = False
    return verbs


def exit_code_from_text(text: str) -> int | None:
    """Parse Claude Code's ``Exit code N`` prefix (also ``Error: Exit code N`` in ``toolUseResult``)."""
    m = _EXIT_LINE.match(text)
    return int(m.group(1)) if m else None


def classify_result(
    tool: str,
    output: str,
    *,
    is_error: bool | None = None,
    exit_code: int | None = None,
    command: str | None = None,
    structured: Any = None,
) -> Outcome:
    """Classify one tool result.

    ``tool`` is the normalised tool name; ``is_error`` what the source flagged (None when it has no
    such flag); ``exit_code`` a shell exit code the source reported; ``command`` the shell script
    (for Bash, to tell an empty ``grep`` from a failing build); ``structured`` Claude's
    ``toolUseResult`` when present (a Bash error there is the string ``"Error: Exit code N…"``).
    """
    if is_error is False and tool not in _TEXT_TOOLS and (exit_code is None or exit_code == 0):
        return _SUCCESS  # the common case, decided without looking at the text
    text = output or ""
    if exit_code is None and tool in SHELL_TOOLS:
        exit_code = exit_code_from_text(text)
        if exit_code is None and isinstance(structured, str):
            exit_code = exit_code_from_text(structured)
    failed = bool(is_error) or (exit_code is not None and exit_code != 0)
    head = text[:_HEAD]
    if "tool_use_error>" in head:
        head = _TAG.sub("", head)
    head = head.strip()
    if head.startswith("Error: "):
        head = head[7:]

    if failed or (is_error is None and exit_code is None):
        kind = _harness_kind(head, _fold(head), failed=failed)
        if kind is not None:
            status = (
                ToolStatus.CANCELLED
                if kind is ErrorKind.CANCELLED_SIBLING or head.startswith("[Request interrupted")
                else ToolStatus.FAILURE
            )
            return Outcome(status, kind, exit_code)

    if tool in SHELL_TOOLS:
        return _classify_shell(head, text, failed=failed, exit_code=exit_code, command=command or "")

    if not failed:
        if tool in SEARCH_TOOLS and (_is_empty_search_text(head) or (not head and _empty_structured(structured))):
            return Outcome(ToolStatus.SUCCESS, ErrorKind.EMPTY_SEARCH, exit_code)
        return Outcome(ToolStatus.SUCCESS, None, exit_code)
    folded = _fold(head)
    if _NOT_FOUND.search(head, folded):
        return Outcome(ToolStatus.FAILURE, ErrorKind.NOT_FOUND, exit_code)
    if _TIMEOUT.search(head, folded):
        return Outcome(ToolStatus.FAILURE, ErrorKind.TIMEOUT, exit_code)
    return Outcome(ToolStatus.FAILURE, ErrorKind.OTHER, exit_code)


def _harness_kind(head: str, folded: str | None, *, failed: bool) -> ErrorKind | None:
    """Harness-level outcomes that any tool can report. Without an error flag (``failed`` False,
    source has no flag) only the unambiguous harness wordings count. ``folded`` is ``_fold(head)``."""
    if _CANCELLED.search(head, folded):
        return ErrorKind.CANCELLED_SIBLING if head.startswith("Sibling") else ErrorKind.USER_REJECTED
    if failed and _SANDBOX.search(head, folded):
        return ErrorKind.SANDBOX
    if _PERMISSION.search(head, folded):
        return ErrorKind.PERMISSION_DENIED
    if _USER_REJECTED.search(head, folded):
        return ErrorKind.USER_REJECTED
    if _MISUSE.search(head, folded):
        return ErrorKind.TOOL_MISUSE
    if failed and _API_ERROR.search(head, folded):
        return ErrorKind.API_ERROR
    return None


def _classify_shell(head: str, text: str, *, failed: bool, exit_code: int | None, command: str) -> Outcome:
    if not failed:
        if exit_code in (0, None) and _no_output(head) and _last_verb(command) in _LISTING_VERBS:
            return Outcome(ToolStatus.SUCCESS, ErrorKind.EMPTY_SEARCH, exit_code)
        return Outcome(ToolStatus.SUCCESS, None, exit_code)
    folded = _fold(head)
    if exit_code == 127 or _COMMAND_MISSING.search(head, folded):
        return Outcome(ToolStatus.FAILURE, ErrorKind.COMMAND_MISSING, exit_code)
    if exit_code == 124 or (exit_code is None and _TIMEOUT.search(head, folded)):
        return Outcome(ToolStatus.FAILURE, ErrorKind.TIMEOUT, exit_code)
    if exit_code == 1 and _last_verb(command) in _SEARCH_VERBS:
        return Outcome(ToolStatus.FAILURE, ErrorKind.EMPTY_SEARCH, exit_code)
    body = text[:4000]
    if _OS_PERMISSION.search(body):
        return Outcome(ToolStatus.FAILURE, ErrorKind.PERMISSION_DENIED, exit_code)
    if _path_missing(body, command):
        return Outcome(ToolStatus.FAILURE, ErrorKind.NOT_FOUND, exit_code)
    return Outcome(ToolStatus.FAILURE, ErrorKind.NONZERO_EXIT, exit_code)


def _path_missing(body: str, command: str) -> bool:
    """A path the command itself used does not exist: a "not found" wording on an error line of
    one of its own programs or of the shell (``cat: x: No such file or directory``, ``/bin/bash:
    line 1: /tmp/venv/bin/python: No such file or directory``). What a program merely prints —
    a pre-commit hook's "link target docs/a.md does not exist", a test's message — is not: the
    command ran and failed (``NONZERO_EXIT``). Without the command, any such wording counts."""
    if not command:
        return _NOT_FOUND.search(body, _fold(body))
    programs = _programs(command)
    for m in _PROGRAM_ERROR.finditer(body):
        if m.group(1) in programs and _NOT_FOUND.search(m.group(2), _fold(m.group(2))):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _programs(command: str) -> frozenset[str]:
    """The programs a shell script runs, and the shells that report a missing program."""
    return frozenset(command_verbs(unwrap_shell(command))) | _SHELLS


@functools.lru_cache(maxsize=4096)
def _last_verb(command: str) -> str:
    """The program whose exit status a shell script returns (the last simple command). Cached:
    ``shlex`` is slow, and agents run the same commands again and again."""
    verbs = command_verbs(unwrap_shell(command)) if command else []
    return verbs[-1] if verbs else ""


def _no_output(head: str) -> bool:
    rest = _EXIT_LINE.sub("", head, count=1).strip()
    return not rest or rest == "(Bash completed with no output)"


def _is_empty_search_text(head: str) -> bool:
    return head.startswith(("No matches found", "No files found"))


def _empty_structured(structured: Any) -> bool:
    """Claude's structured Grep / Glob output for a search that found nothing. In Grep content mode
    ``numFiles`` is 0 even with matches, so content mode is judged by ``numLines`` / ``content``."""
    if not isinstance(structured, dict):
        return False
    mode = structured.get("mode")
    if mode == "content":
        return not structured.get("content") and not structured.get("numLines")
    if mode == "count":
        return False  # the "Found N" line is unreliable; the text decides (FORMATS.md §1.4)
    return structured.get("numFiles") == 0 and not structured.get("filenames")
