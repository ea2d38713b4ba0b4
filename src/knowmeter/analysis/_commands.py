"""Just enough shell parsing to tell a search / read command from any other Bash call and to
pull out what it searched for (pattern or path) and which files it read.

Two shell habits are understood: a ``cd X`` before a statement (``cd docs && cat a.md`` reads
``docs/a.md``: each statement carries the directory the ``cd``s before it moved to), and an
``|| echo "not found"`` fallback (the text it prints is kept, so a search whose only output is
its fallback is recognised as one that failed, although the command exits 0)."""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

#: Commands that look for something by pattern (their target is the pattern).
PATTERN_VERBS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep", "find", "fd", "fdfind", "locate"})
#: Commands that list or inspect a path (their target is the path).
LIST_VERBS = frozenset({"ls", "tree", "stat", "file", "git ls-files"})
#: Commands that print a file's content: a successful one is a knowledge-file access.
READ_VERBS = frozenset({"cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "sed"})
SEARCH_VERBS = PATTERN_VERBS | LIST_VERBS | READ_VERBS
_NAME_VERBS = frozenset({"find", "fd", "fdfind", "locate"})
#: Commands that only pass on, narrow or count what a search before them in a pipeline printed:
#: a pipeline of a search and these is still that search (``find … | grep -v x | head``).
FILTER_VERBS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "head", "tail", "sort", "uniq", "wc", "cut", "tr", "awk", "sed", "nl", "cat"}
    | {"column", "less", "more", "tee", "xargs"}
)

# statements that neither search nor change what the command as a whole is about
_NEUTRAL_VERBS = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "pwd", "set", "export", ":"})
# wrappers skipped before the real verb
_WRAPPERS = frozenset({"sudo", "command", "time", "nohup", "env", "exec"})
# options that take a value, per verb family (so the value is not mistaken for a pattern / path)
_VALUED_OPTIONS: dict[str, frozenset[str]] = {
    "grep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--max-count", "--context", "--include", "--exclude"}),
    "rg": frozenset(
        {
            "-e",
            "-f",
            "-m",
            "-A",
            "-B",
            "-C",
            "-g",
            "-t",
            "-T",
            "--glob",
            "--type",
            "--type-not",
            "--max-count",
            "--max-depth",
            "-M",
            "--context",
        }
    ),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "sed": frozenset({"-e", "-f"}),
    "ls": frozenset({"-I", "--ignore", "-w"}),
    "tree": frozenset({"-L", "-P", "-I"}),
    "fd": frozenset({"-e", "-t", "-d", "--extension", "--type", "--max-depth", "-E", "--exclude"}),
}
_VALUED_OPTIONS.update(
    {
        "egrep": _VALUED_OPTIONS["grep"],
        "fgrep": _VALUED_OPTIONS["grep"],
        "git grep": _VALUED_OPTIONS["grep"],
        "ag": _VALUED_OPTIONS["rg"],
        "ack": _VALUED_OPTIONS["rg"],
        "fdfind": _VALUED_OPTIONS["fd"],
    }
)
_FIND_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex"})
_SHELL_WRAPPER = re.compile(r"^\s*(?:/usr)?(?:/bin/)?(?:ba|z|da)?sh\s+-l?c\s+(?P<rest>.+)$", re.S)
_SEPARATORS = frozenset(";&|\n()")
_VARIABLE = re.compile(r"\$\{?\w+\}?")
# shell grammar, not programs: keywords that lead a command (``do grep …``, ``then cat …``),
# loop / case headers (``for f in a b``) and closing words (``done``, ``fi``)
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})
_HEADERS = frozenset({"for", "select", "case", "function"})
_CLOSERS = frozenset({"done", "fi", "esac", "}"})
_QUIET_FLAGS = frozenset({"-q", "--quiet", "--silent"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PWD = re.compile(r"^\$(?:PWD|\{PWD\})(?=/|$)")
_VAR_PREFIX = re.compile(r"^\$(?:PWD|\{PWD\}|HOME|\{HOME\})(?=/|$)")
#: Commands that print (part of) the files they are given: readers, and pattern searches given
#: file operands (``grep PATTERN FILE`` shows the file's matching lines).
_CONTENT_VERBS = READ_VERBS | frozenset({"awk", "gawk", "grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"})
# options after which a pattern search prints file names or counts, not content
_NAMES_ONLY = frozenset({"-l", "-L", "-c", "--files-with-matches", "--files-without-match", "--count", "--files"})
# ``open("x")`` / ``Path("x").read_text()`` in a ``python -c`` script
_PY_READ = re.compile(
    r"""\bopen\(\s*[rbf]?(['"])([^'"\n]+)\1(?:\s*,\s*(?:mode\s*=\s*)?['"]([^'"]*)['"])?"""
    r"""|\bPath\(\s*[rbf]?(['"])([^'"\n]+)\4\s*\)\s*\.\s*(?:read_text|read_bytes|open)\b"""
)


@dataclass(frozen=True, slots=True)
class Statement:
    """One simple command: its verb (``git grep`` counts as one verb), its arguments, and
    whether its output is hidden from the agent (stdout redirected to a file, ``grep -q``)."""

    verb: str
    args: tuple[str, ...]
    quiet: bool = False
    cwd: str = ""  # where earlier ``cd``s in the command moved to ("" = where the command started)

    def path(self, arg: str) -> str:
        """``arg`` as seen from where the command started (a ``cd`` before it applied;
        ``$PWD/…`` is where the statement ran)."""
        m = _PWD.match(arg)
        if m:
            arg = arg[m.end() :].lstrip("/") or "."
        return posixpath.join(self.cwd, arg) if self.cwd and arg and not arg.startswith(("/", "~", "$")) else arg


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """A parsed command line: the first stage of each pipeline (what it is *about*) and every
    stage (for reads of the form ``cat a | head``)."""

    text: str
    pipelines: tuple[tuple[Statement, ...], ...]
    fallbacks: tuple[str, ...] = ()  # what ``|| echo …`` / ``|| printf …`` statements print

    @property
    def heads(self) -> tuple[Statement, ...]:
        """The first stage of each pipeline."""
        return tuple(p[0] for p in self.pipelines)

    @property
    def stages(self) -> tuple[Statement, ...]:
        """Every stage of every pipeline, in order."""
        return tuple(s for p in self.pipelines for s in p)

    def only_fallback(self, output: str) -> bool:
        """True when ``output`` is nothing but the text of ``|| echo …`` fallbacks: every search
        before them failed, although the command as a whole exited 0."""
        if not self.fallbacks or len(output) > 4 * sum(len(f) + 1 for f in self.fallbacks) + 64:
            return False  # (a long output is more than fallback lines: no need to split it)
        lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
        return bool(lines) and all(line in self.fallbacks for line in lines)

    def searches_said(self, output: str) -> str:
        """``output`` without the lines the command's own ``echo`` / ``printf`` statements
        printed (``echo "=== $f ==="`` headers of a loop; a ``$variable`` matches any text):
        what its searches said. ``|| echo`` fallbacks stay: they answer the search (see
        ``only_fallback``)."""
        said = [
            _echo_line(st)
            for p in self.pipelines
            for st in p
            if st.verb in ("echo", "printf") and _echo_text(st) not in self.fallbacks
        ]
        if not said:
            return output
        return "\n".join(x for x in output.splitlines() if not any(e.fullmatch(x.strip()) for e in said))

    @property
    def relevant(self) -> tuple[Statement, ...]:
        return tuple(s for s in self.heads if s.verb not in _NEUTRAL_VERBS)

    def _relevant_pipelines(self) -> list[tuple[Statement, ...]]:
        return [p for p in self.pipelines if p[0].verb not in _NEUTRAL_VERBS]

    @property
    def is_search(self) -> bool:
        """True when every pipeline that does something is a search, list or read command
        followed only by filters (``head file | python3 -c …`` is a Python script: when it
        fails, the script failed, not the read)."""
        rel = self._relevant_pipelines()
        return bool(rel) and all(_searches(p[0]) and all(_filters(s) for s in p[1:]) for p in rel)

    def failed_reader(self, output: str) -> Statement | None:
        """The search stage whose own "no such file" error is in ``output`` (``cat x | python3``
        printing ``cat: x: No such file or directory``): the stage that failed."""
        for st in self.relevant:
            if _searches(st) and re.search(
                rf"^{re.escape(st.verb)}: .*(?:No such file|cannot access|cannot open)", output, re.M
            ):
                return st
        return None

    @property
    def counts_only(self) -> bool:
        """True when the command's output is a count (``… | wc -l``, ``grep -c``): "0" is empty."""
        if len(self.pipelines) != 1:
            return False
        last = self.pipelines[0][-1]
        return (last.verb == "wc" and not _operands(last)) or (
            last.verb in PATTERN_VERBS and any(a == "-c" or a == "--count" for a in last.args)
        )

    @property
    def quiet(self) -> bool:
        """True when empty output means nothing: some search's output does not reach the agent."""
        return any(s.quiet for s in self.relevant)

    def target(self, *, narrowest: bool = False, output: str = "") -> tuple[str, str]:
        """``(kind, value)`` of what the first search looked for: ``("pattern", …)`` or
        ``("path", …)``; ``("command", text)`` when nothing better can be said. ``narrowest``:
        when the pipeline printed nothing, the stage that filtered everything out — its last
        ``grep PATTERN`` (``ls /usr/bin | grep python`` looked for ``python``). A command that
        is no search but whose read failed (``failed_reader(output)``) looked for that file."""
        reader = None if self.is_search else self.failed_reader(output)
        if reader is not None:
            kind, value = _statement_target(reader)
            return kind, reader.path(value)
        for pipeline in self._relevant_pipelines():
            head = pipeline[0]
            if head.verb not in SEARCH_VERBS:
                continue
            if narrowest:
                for st in reversed(pipeline[1:]):
                    if st.verb in PATTERN_VERBS and not _inverted(st):
                        kind, value = _statement_target(st)
                        if kind == "pattern" and value:
                            return kind, value
            kind, value = _statement_target(head)
            if value:
                return kind, head.path(value) if kind == "path" else value
        return "command", self.text.strip()

    def read_paths(self) -> list[str]:
        """Files whose content the command shows the agent: ``cat``/``head``/``tail``/``less``/
        ``nl``/``sed -n``/``awk`` with file arguments, ``grep``/``rg PATTERN FILE`` (not ``-l``
        or ``-c``: names and counts only), and ``open("f")`` / ``Path("f").read_text()`` in a
        ``python -c`` script; a reader fed by a pipe reads nothing by itself."""
        out: list[str] = []
        for st in self.stages:
            if st.quiet:
                continue
            if st.verb.startswith("python"):
                out.extend(st.path(p) for p in _python_reads(st.args))
                continue
            if st.verb not in _CONTENT_VERBS or (st.verb == "sed" and _sed_edits(st.args)):
                continue
            if st.verb in PATTERN_VERBS and any(a in _NAMES_ONLY or _short_flags_with(a, "l") for a in st.args):
                continue
            operands = _operands(st)
            scripted = st.verb in ("sed", "awk", "gawk") or st.verb in PATTERN_VERBS
            if scripted and not any(a in ("-e", "-f", "--regexp", "--file") for a in st.args):
                operands = operands[1:]  # the first operand is the script / the pattern
            if st.verb in PATTERN_VERBS and (
                len(operands) > 1 or (_recursive(st) and not all(map(looks_like_file, operands)))
            ):
                continue  # its output names the files whose lines it showed: see ``grep_hits``
            out.extend(st.path(a) for a in operands if _names_a_file(a))
        return out

    @property
    def shows_matches(self) -> bool:
        """True when a stage greps several files or folders and prints matching lines (each
        prefixed by its file: ``grep_hits`` reads them back)."""
        return any(
            st.verb in PATTERN_VERBS
            and st.verb not in _NAME_VERBS
            and not st.quiet
            and not any(a in _NAMES_ONLY or _short_flags_with(a, "l") for a in st.args)
            for st in self.stages
        )


def _searches(st: Statement) -> bool:
    """A search, list or read statement — not an in-place ``sed``, and not a ``cat``/``ls`` whose
    output goes to a file (that writes a file; a quiet grep still answers by its exit code)."""
    if st.verb not in SEARCH_VERBS or (st.verb == "sed" and _sed_edits(st.args)):
        return False
    return st.verb in PATTERN_VERBS or not st.quiet


def looks_like_file(path: str) -> bool:
    """A path whose last part has an extension (a folder rarely does; ``.`` and ``dir/`` never)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return not path.endswith("/") and "." in name.lstrip(".")


def _recursive(st: Statement) -> bool:
    """A grep that descends into folders (``-r``, or a searcher that recurses by default)."""
    if st.verb in ("rg", "ag", "ack", "git grep"):
        return True
    return any(
        a in ("-r", "-R", "--recursive") or _short_flags_with(a, "r") or _short_flags_with(a, "R") for a in st.args
    )


# ``path:12:text`` / ``./path:text`` — a grep output line and the file it comes from (a path
# with a folder or an extension, no spaces)
_HIT = re.compile(r"^((?:\.{1,2}/|/)?[\w.@+-]+(?:/[\w.@+-]+)+|[\w@+-][\w.@+-]*\.[A-Za-z0-9]{1,8}):(?:\d+:)?", re.M)


def grep_hits(output: str) -> list[str]:
    """The files named at the start of grep output lines (``a/b.md:3:…``), once each, in order."""
    return list(dict.fromkeys(m.group(1) for m in _HIT.finditer(output)))


def _names_a_file(arg: str) -> bool:
    """An operand that names one file: not a folder (``.``, ``dir/``), a glob or a variable
    other than ``$PWD`` / ``$HOME`` at its start (``$file`` in a loop: which file is unknown)."""
    rest = _VAR_PREFIX.sub("", arg)
    return not (arg in (".", "..") or arg.endswith("/") or "$" in rest or any(c in rest for c in "*?["))


def _python_reads(args: tuple[str, ...]) -> list[str]:
    """Literal paths a ``python -c SCRIPT`` opens for reading."""
    script = next((args[j + 1] for j, a in enumerate(args[:-1]) if a == "-c"), "")
    found = _PY_READ.finditer(script)
    return [m.group(2) or m.group(5) for m in found if not set(m.group(3) or "") & set("wax")]


def _filters(st: Statement) -> bool:
    """A pipeline stage that only passes on, narrows or counts its input (``xargs grep`` too)."""
    if st.verb == "xargs":
        inner = next((a for a in st.args if not a.startswith("-")), "")
        return PurePosixPath(inner).name in SEARCH_VERBS
    return st.verb in FILTER_VERBS and not (st.verb == "sed" and _sed_edits(st.args))


def _inverted(st: Statement) -> bool:
    """``grep -v``: a stage that removes lines rather than looking for them."""
    return any(a in ("-v", "--invert-match") or _short_flags_with(a, "v") for a in st.args)


def command_text(tool_input: dict[str, Any]) -> str:
    """The command line of a Bash-like tool call (Claude ``command``, Codex ``cmd`` or an argv list)."""
    raw = tool_input.get("command", tool_input.get("cmd", ""))
    if isinstance(raw, list):
        shell = str(raw[0]).rsplit("/", 1)[-1] if raw else ""
        if len(raw) >= 3 and shell in ("bash", "sh", "zsh") and raw[1] in ("-c", "-lc"):
            return str(raw[2])
        return shlex.join(str(a) for a in raw)
    return str(raw) if raw is not None else ""


@functools.lru_cache(maxsize=4096)
def parse_command(text: str) -> ShellCommand:
    """Parse a command line leniently (unbalanced quotes fall back to whitespace splitting).
    Redirection targets are dropped; a here-document's body is not parsed as commands."""
    text = _unwrap_shell(text)
    pipelines: list[list[Statement]] = []
    fallbacks: list[str] = []
    current: list[str] = []
    after_pipe = after_or = False
    quiet = False
    cwd = ""
    expect: str | None = None  # "target" of a redirection, or "delimiter" of a here-document
    heredoc: str | None = None  # delimiter whose body starts after the next newline
    in_body = False

    def flush() -> None:
        nonlocal cwd
        st = _statement(current, quiet, cwd)
        if st is not None:
            if after_pipe and pipelines:
                pipelines[-1].append(st)
            else:
                pipelines.append([st])
            if st.verb == "cd" and not after_pipe:
                cwd = _cd(cwd, st.args)
            elif after_or and st.verb in ("echo", "printf"):
                fallbacks.append(_echo_text(st))
        current.clear()

    for tok in _tokens(text):
        if in_body:
            in_body = tok != heredoc
            heredoc = heredoc if in_body else None
            continue
        if expect is not None:
            if expect == "delimiter":
                heredoc = tok.lstrip("-")
            expect = None
            continue
        if tok and all(c in "<>&" for c in tok) and tok not in ("&", "&&"):
            fd = current.pop() if current and current[-1].isdigit() else None
            if tok.startswith("<<") and tok != "<<<":
                expect = "delimiter"
            else:
                expect = "target"
                quiet = quiet or (tok in (">", ">>", "&>", "&>>", ">|") and fd in (None, "1"))
            continue
        if tok and all(c in _SEPARATORS for c in tok):
            flush()
            quiet = False
            after_pipe, after_or = tok == "|", tok == "||"
            in_body = heredoc is not None and "\n" in tok
            continue
        current.append(tok)
    flush()
    return ShellCommand(text, tuple(tuple(p) for p in pipelines), tuple(f for f in fallbacks if f))


def _echo_text(st: Statement) -> str:
    return " ".join(a for a in st.args if not a.startswith("-")).strip()


def _echo_line(st: Statement) -> re.Pattern[str]:
    """What an ``echo`` / ``printf`` statement prints, as a pattern (``$x`` / ``${x}`` any text)."""
    return re.compile(".*".join(re.escape(part.strip()) for part in _VARIABLE.split(_echo_text(st))))


def _cd(cwd: str, args: tuple[str, ...]) -> str:
    """The directory after ``cd args`` from ``cwd`` (relative to where the command started); a
    ``cd`` home or back (``cd``, ``cd -``, ``cd ~``) leaves it unknown: the start is kept."""
    target = next((a for a in args if not a.startswith("-")), "")
    if not target or target.startswith("~"):
        return ""
    return posixpath.normpath(posixpath.join(cwd, target))


def _unwrap_shell(text: str) -> str:
    m = _SHELL_WRAPPER.match(text)
    if not m:
        return text
    try:
        parts = shlex.split(m.group("rest"))
    except ValueError:
        return text
    return parts[0] if len(parts) == 1 else text


def _tokens(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()\n")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:
        return text.split()


def _statement(words: list[str], redirected: bool = False, cwd: str = "") -> Statement | None:
    i = 0
    while i < len(words) and (_ASSIGNMENT.match(words[i]) or words[i] in _WRAPPERS or words[i] in _KEYWORDS):
        i += 1
    if i >= len(words) or words[i] in _HEADERS or words[i] in _CLOSERS:
        return None
    verb = PurePosixPath(words[i]).name
    rest = words[i + 1 :]
    if verb == "git" and rest and rest[0] in ("grep", "ls-files"):
        verb, rest = f"git {rest[0]}", rest[1:]
    quiet = redirected or (verb in PATTERN_VERBS and any(a in _QUIET_FLAGS or _short_flags_with(a, "q") for a in rest))
    return Statement(verb, tuple(rest), quiet, cwd)


def _short_flags_with(arg: str, letter: str) -> bool:
    """``-rq`` style bundles of single-letter flags that include ``letter``."""
    return arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 and arg[1:].isalpha() and letter in arg[1:]


def _operands(st: Statement) -> list[str]:
    """Non-option arguments, skipping the values of options that take one."""
    valued = _VALUED_OPTIONS.get(st.verb, frozenset())
    out: list[str] = []
    it = iter(st.args)
    for a in it:
        if a == "--":
            out.extend(it)
            break
        if a.startswith("-") and len(a) > 1:
            if a in valued:
                next(it, None)
            continue
        out.append(a)
    return out


def _glob_option(args: tuple[str, ...]) -> str:
    """The value of ``-g`` / ``--glob`` (``rg --files -g '*.md'``, also written ``-g'*.md'``)."""
    for j, a in enumerate(args):
        if a in ("-g", "--glob") and j + 1 < len(args):
            return args[j + 1]
        if a.startswith("--glob="):
            return a[len("--glob=") :]
        if a.startswith("-g") and len(a) > 2:
            return a[2:]
    return ""


def _sed_edits(args: tuple[str, ...]) -> bool:
    return any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args)


def _statement_target(st: Statement) -> tuple[str, str]:
    if st.verb == "find":
        args = list(st.args)
        for j, a in enumerate(args[:-1]):
            if a in _FIND_NAME_TESTS:
                return "pattern", args[j + 1]
        ops = [a for a in args if not a.startswith("-")]
        return "path", ops[0] if ops else "."
    if st.verb in PATTERN_VERBS:
        for j, a in enumerate(st.args[:-1]):
            if a in ("-e", "--regexp"):
                return "pattern", st.args[j + 1]
        ops = _operands(st)
        if ops and "--files" not in st.args:
            return "pattern", ops[0]
        return "pattern", _glob_option(st.args)
    ops = _operands(st)
    if st.verb == "sed" and ops:
        ops = ops[1:] or ops
    return "path", ops[0] if ops else "."
