"""Tool-level gap signals: failed searches (spec §4.1) and repeated failures (spec §4.4).

Every tool call of a *search class* gets one outcome:

- ``gap``       — it looked for something and came back empty or not found;
- ``found``     — it looked and found something (ends a run of failures);
- ``excluded``  — it failed for a reason that says nothing about knowledge (permission denied,
  user rejection, cancelled sibling, tool misuse, API error, timeout, command missing = exit
  127, or a path the user gave in the prompt); it neither counts nor ends a run.

Search classes: ``Grep``, ``Glob``, ``LS``, ``Read``, ``WebSearch`` and ``Bash search`` (a Bash
command whose every pipeline is a grep / rg / find / ls / cat / head / sed … command). Any
other call (an edit, a build, a test run) is not a search and is ignored here.

Similar targets (the collapse rule): two failed searches are similar when their normalised
targets are equal; for paths, when one is an ancestor directory of the other (glob patterns
compare by their literal directory prefix); for patterns and queries, when they share their
first search term or at least half of their terms. Consecutive similar failures — no
successful search of the same class in between, in the same agent — are one event, with
``occurrences`` counting them. Within one batch (parallel calls of one turn, made before any of
their results was seen) path searches under the same folder are similar too: five reads of
files of one missing folder are one mistake, not five (across turns, two files of one folder
stay two gaps).

Repeated failure (spec §4.4): 3 consecutive turns of one agent holding at least 3 calls of the
same class of search (``search_kind``: content search, name search, path lookup — a Glob and a
``find`` are both name searches), every one of them failed or denied (a denied retry is a
failed attempt; cancelled siblings and tool misuse are no attempt). Parallel calls of one turn
count one each: three name searches of one message that all miss are a repeated failure; a
success anywhere in the window spoils it. Overlapping windows are one signal.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from knowmeter.analysis._commands import PATTERN_VERBS, READ_VERBS, command_text, parse_command
from knowmeter.analysis._model import GapSignal
from knowmeter.analysis._paths import (
    PathKeyer,
    is_component_prefix,
    literal_prefix,
    mentioned,
    same_file_name,
)
from knowmeter.analysis._text import clip
from knowmeter.traces import ErrorKind, MessageEvent, ToolInvocation, ToolResultEvent, ToolStatus, Trace

#: Error kinds that are never knowledge gaps (FORMATS.md §5 and the issue's exclusion list).
NON_GAP_KINDS: frozenset[ErrorKind] = frozenset(
    {
        ErrorKind.PERMISSION_DENIED,
        ErrorKind.USER_REJECTED,
        ErrorKind.CANCELLED_SIBLING,
        ErrorKind.TOOL_MISUSE,
        ErrorKind.API_ERROR,
        ErrorKind.SANDBOX,
        ErrorKind.TIMEOUT,
        ErrorKind.COMMAND_MISSING,
    }
)
# exit codes with a fixed non-knowledge meaning, for traces whose adapter set no error_kind
_EXIT_KINDS = {
    127: ErrorKind.COMMAND_MISSING,
    126: ErrorKind.PERMISSION_DENIED,
    124: ErrorKind.TIMEOUT,
    -1: ErrorKind.PERMISSION_DENIED,
}
_EMPTY_TEXTS = ("no matches found", "no files found", "no results found", "(bash completed with no output)")
_NOT_FOUND = re.compile(r"no such file or directory|cannot access|cannot open|does not exist|not found", re.I)
# a ``cd`` into a missing folder (``cd x && grep …`` stops there): navigation, not a search
_CD_FAILED = re.compile(r"^(?:\S*: )?(?:line \d+: )?cd: .*(?:No such file or directory|Not a directory)", re.M)
# a line of a command's output that is itself an error message (``ls: cannot access 'x': …``), as
# opposed to a match line that merely contains the words (``./a.txt:3:No such file …``)
_NOT_FOUND_ERROR_LINE = re.compile(r"^[\w./-]+: (?:.*No such file or directory|cannot access|cannot open)", re.I)
_TERM = re.compile(r"\w{2,}")
_QUERY_STOPWORDS = frozenset(
    {
        "how",
        "to",
        "the",
        "what",
        "is",
        "are",
        "a",
        "an",
        "of",
        "in",
        "for",
        "does",
        "do",
        "why",
        "where",
        "which",
        "and",
        "or",
        "with",
    }
)
_DENIED = frozenset({ErrorKind.PERMISSION_DENIED.value, ErrorKind.USER_REJECTED.value})
REPEAT_MIN_FAILURES = 3
REPEAT_TURN_WINDOW = 3

Kind = Literal["pattern", "path", "command"]
OutcomeKind = Literal["gap", "found", "excluded"]


@dataclass(frozen=True, slots=True)
class _Outcome:
    inv: ToolInvocation
    cls: str
    kind: OutcomeKind
    reason: str  # "empty", "not_found", "error", or the exclusion reason
    target_kind: Kind = "command"  # the target: set for gaps only
    target: str = ""
    key: str = ""


def search_class(inv: ToolInvocation) -> str | None:
    """The search class of a call, or None when the call is not a search."""
    tool = inv.call.tool
    if tool in ("Grep", "Glob", "LS", "Read", "WebSearch"):
        return tool
    if tool == "Bash":
        cmd = parse_command(command_text(inv.call.input))
        if cmd.is_search or (inv.result is not None and cmd.failed_reader(inv.result.output) is not None):
            return "Bash search"
    return None


def _target(inv: ToolInvocation, cls: str, keyer: PathKeyer, reason: str) -> tuple[Kind, str, str]:
    """``(kind, display target, comparison key)`` of a search call that failed for ``reason``."""
    inp = inv.call.input
    if cls == "Grep":
        pat = str(inp.get("pattern", inp.get("query", "")))
        return "pattern", pat, pat
    if cls == "WebSearch":
        q = str(inp.get("query", inp.get("q", "")))
        return "pattern", q, q
    cwd = inv.call.cwd
    if cls in ("Read", "LS"):
        p = str(inp.get("file_path", inp.get("path", inp.get("absolute_path", inp.get("dir_path", "")))))
        return "path", p, keyer.key(p, cwd) if p else ""
    if cls == "Glob":
        pat = str(inp.get("pattern", ""))
        base = str(inp.get("path", "") or "")
        shown = f"{base.rstrip('/')}/{pat}" if base else pat
        literal = literal_prefix(shown)
        if literal == shown.rstrip("/"):  # no wildcard: the pattern names one path
            return "path", shown, keyer.key(shown, cwd)
        return "path", shown, f"{keyer.key(literal, cwd)}/{shown[len(literal) :].lstrip('/')}" if literal else shown
    cmd = parse_command(command_text(inp))
    output = inv.result.output if inv.result is not None else ""
    kind, value = cmd.target(narrowest=reason in ("empty", "fallback"), output=output)
    if kind == "path":
        return "path", value, keyer.key(value.rstrip("*?/") or value, cwd)
    return ("pattern" if kind == "pattern" else "command"), value, value


def _all_not_found_lines(text: str) -> bool:
    """Every non-blank line of ``text`` is a "no such file" error of a shell command."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_NOT_FOUND_ERROR_LINE.match(x) for x in lines)


def _empty(inv: ToolInvocation, r: ToolResultEvent, cls: str) -> bool:
    """The search came back with nothing to show (never when its output was kept from the agent)."""
    if cls == "Bash search":
        cmd = parse_command(command_text(inv.call.input))
        if cmd.quiet:
            return False
        if cmd.counts_only and r.output.strip() == "0":
            return True  # ``grep -c x f`` / ``find … | wc -l`` counted nothing
    head = r.output.lstrip()[:64]  # what the stripped output starts with (no copy of a long output)
    return not head.rstrip() or head.lower().startswith(_EMPTY_TEXTS)


def _classify(inv: ToolInvocation, cls: str, given: Sequence[str], keyer: PathKeyer) -> _Outcome | None:
    """The outcome of one search-class call (None when it has no result to judge). Only a gap
    needs its target: a found or excluded search is not compared with anything."""
    r = inv.result
    if r is None or r.status == ToolStatus.UNKNOWN:
        return None
    ek = r.error_kind
    if r.status == ToolStatus.CANCELLED:
        return _Outcome(inv, cls, "excluded", (ek if ek in NON_GAP_KINDS else ErrorKind.CANCELLED_SIBLING).value)
    if ek is None and r.exit_code in _EXIT_KINDS:
        ek = _EXIT_KINDS[r.exit_code]
    if ek in NON_GAP_KINDS:
        assert ek is not None
        return _Outcome(inv, cls, "excluded", ek.value)
    if r.status == ToolStatus.FAILURE:
        if cls == "Bash search" and _CD_FAILED.search(r.output):
            return _Outcome(inv, cls, "excluded", "navigation")  # the search never ran
        not_found = ek == ErrorKind.NOT_FOUND or bool(_NOT_FOUND.search(r.output))
        if cls == "Read" and not not_found:
            return _Outcome(inv, cls, "excluded", (ek or ErrorKind.OTHER).value)
        reason = "not_found" if not_found else "empty" if _empty(inv, r, cls) else "error"
    elif ek == ErrorKind.EMPTY_SEARCH or (cls != "Read" and _empty(inv, r, cls)):
        reason = "empty"
    elif cls == "Bash search" and parse_command(command_text(inv.call.input)).only_fallback(r.output):
        reason = "fallback"  # ``grep x . || echo "not found"``: exit 0, but only the fallback spoke
    elif ek == ErrorKind.NOT_FOUND or (
        cls == "Bash search"
        and _all_not_found_lines(parse_command(command_text(inv.call.input)).searches_said(r.output).strip())
    ):
        reason = "not_found"
    else:
        return _Outcome(inv, cls, "found", "")
    tkind, target, key = _target(inv, cls, keyer, reason)
    if (
        tkind == "path"
        and reason in ("not_found", "fallback")
        and (mentioned(target, key, given) or _reads_a_mention(inv, cls, target))
    ):
        return _Outcome(inv, cls, "excluded", "given_path")
    return _Outcome(inv, cls, "gap", reason, tkind, target, key)


def _reads_a_mention(inv: ToolInvocation, cls: str, target: str) -> bool:
    """A read of ``@path``: a prompt's file mention (``@docs/a.md``) used literally — the path is
    the user's, not one the agent constructed (a listing probe of ``@dir`` is the agent's own)."""
    if not target.startswith("@"):
        return False
    if cls == "Read":
        return True
    verb = next((st.verb for st in parse_command(command_text(inv.call.input)).relevant), "")
    return cls == "Bash search" and verb in READ_VERBS


def _terms(pattern: str) -> list[str]:
    return [t for t in _TERM.findall(pattern.lower()) if t not in _QUERY_STOPWORDS]


def _folder(key: str) -> str:
    """The folder a path search looked in: a glob's literal directory, a path's parent."""
    literal = literal_prefix(key)
    return literal if literal != key else posixpath.dirname(key)


def similar(a: _Outcome, b: _Outcome) -> bool:
    """The collapse rule of the module docstring."""
    if a.key == b.key:
        return True
    if (
        a.target_kind == b.target_kind == "path"
        and a.inv.call.turn == b.inv.call.turn
        and _folder(a.key) == _folder(b.key) not in ("", ".", "/")
    ):
        return True  # one batch, one folder
    if a.target_kind != b.target_kind:
        return False
    if a.target_kind == "path":
        pa, pb = literal_prefix(a.key), literal_prefix(b.key)
        a_inside_b = pb == b.key and is_component_prefix(pb, pa)
        b_inside_a = pa == a.key and is_component_prefix(pa, pb)
        return a_inside_b or b_inside_a or same_file_name(a.key, b.key)
    ta, tb = _terms(a.key), _terms(b.key)
    if not ta or not tb:
        return False
    if ta[0] == tb[0]:
        return True
    sa, sb = set(ta), set(tb)
    return len(sa & sb) / len(sa | sb) >= 0.5


_REASON_TEXT = {
    "empty": "no results",
    "not_found": "not found",
    "error": "failed",
    "fallback": "nothing found (only its || fallback printed)",
}


def _describe(o: _Outcome) -> str:
    result = _REASON_TEXT[o.reason]
    code = o.inv.result.exit_code if o.inv.result is not None else None
    if code not in (None, 0):
        result += f" (exit {code})"
    if o.cls == "Bash search":
        return f"Bash: {clip(command_text(o.inv.call.input), 160)} → {result}"
    return f'{o.cls} "{clip(o.target, 160)}" → {result}'


def _next_words(trace: Trace, after_index: int, agent_id: str | None) -> str | None:
    """The agent's first sentence after event ``after_index`` (its reaction to a failure)."""
    for i in range(after_index + 1, len(trace.events)):
        e = trace.events[i]
        if (
            isinstance(e, MessageEvent)
            and e.role == "assistant"
            and not e.injected
            and e.agent_id == agent_id
            and e.text.strip()
        ):
            first = re.split(r"(?<=[.!?。！？])\s|\n", e.text.strip(), maxsplit=1)[0]
            return clip(first, 200)
    return None


def search_signals(
    trace: Trace, invocations: Sequence[ToolInvocation], *, sample_id: str, given: Sequence[str], keyer: PathKeyer
) -> tuple[list[GapSignal], dict[str, int]]:
    """Failed-search and repeated-failure signals of one trace (``invocations`` are its
    ``Trace.invocations()``), plus the count of excluded (non-knowledge) failures by reason."""
    outcomes: list[_Outcome] = []
    for inv in invocations:
        cls = search_class(inv)
        if cls is None:
            continue
        o = _classify(inv, cls, given, keyer)
        if o is not None:
            outcomes.append(o)
    excluded: dict[str, int] = {}
    for o in outcomes:
        if o.kind == "excluded":
            excluded[o.reason] = excluded.get(o.reason, 0) + 1
    gaps = any(o.kind == "gap" for o in outcomes)  # only a gap needs the position of its result
    result_pos = {e.id: i for i, e in enumerate(trace.events) if isinstance(e, ToolResultEvent)} if gaps else {}
    return _failed_searches(trace, outcomes, sample_id, result_pos) + _repeated(outcomes, sample_id), excluded


def _failed_searches(
    trace: Trace, outcomes: list[_Outcome], sample_id: str, result_pos: dict[str, int]
) -> list[GapSignal]:
    signals: list[GapSignal] = []
    # per agent: the index in ``signals`` of the last event and its outcome, until a success
    last: dict[str | None, tuple[int, _Outcome] | None] = {}
    for o in outcomes:
        agent = o.inv.call.agent_id
        if o.kind == "found":
            last[agent] = None
        if o.kind != "gap":
            continue
        prev = last.get(agent)
        if prev is not None and similar(prev[1], o):
            idx = prev[0]
            signals[idx] = replace(
                signals[idx], occurrences=signals[idx].occurrences + 1, calls=(*signals[idx].calls, o.inv.call.id)
            )
            last[agent] = (idx, o)
            continue
        pos = result_pos.get(o.inv.call.id, len(trace.events) - 1)
        signals.append(
            GapSignal(
                sample_id=sample_id,
                turn=o.inv.call.turn,
                source="failed_search",
                tool=o.inv.call.tool,
                target=clip(o.target, 300),
                context=_describe(o),
                note=_next_words(trace, pos, agent),
                calls=(o.inv.call.id,),
            )
        )
        last[agent] = (len(signals) - 1, o)
    return signals


#: What a search looks for, the "class of search" of the repeated-failure rule: file contents by
#: pattern, file names by pattern, or a given path.
_NAME_VERBS = frozenset({"find", "fd", "fdfind", "locate"})


def search_kind(o: _Outcome) -> str:
    """``content search`` (Grep, grep/rg …), ``name search`` (Glob, find …), ``path lookup``
    (Read, LS, ls/cat/head …) or ``web search``."""
    if o.cls == "WebSearch":
        return "web search"
    if o.cls == "Bash search":
        verb = next((st.verb for st in parse_command(command_text(o.inv.call.input)).relevant), "")
        return "name search" if verb in _NAME_VERBS else "content search" if verb in PATTERN_VERBS else "path lookup"
    return {"Grep": "content search", "Glob": "name search"}.get(o.cls, "path lookup")


def _attempt_failed(o: _Outcome) -> bool | None:
    """True for a failed search or a denied one (the agent tried and got nothing), False for a
    success, None for outcomes that are no attempt (cancelled sibling, tool misuse, API error …)."""
    if o.kind == "gap" or (o.kind == "excluded" and o.reason in _DENIED):
        return True
    return False if o.kind == "found" else None


def _repeated(outcomes: list[_Outcome], sample_id: str) -> list[GapSignal]:
    """Spec §4.4 per agent and class of search: a window of 3 consecutive turns holding at least
    3 calls of the class, every one failed (a success anywhere in the window, parallel calls
    included, spoils it). Overlapping windows are one signal."""
    by_class: dict[tuple[str | None, str], list[tuple[_Outcome, bool]]] = {}
    for o in outcomes:
        failed = _attempt_failed(o)
        if failed is not None:
            by_class.setdefault((o.inv.call.agent_id, search_kind(o)), []).append((o, failed))
    signals: list[GapSignal] = []
    for (_, kind), attempts in by_class.items():
        runs: list[list[_Outcome]] = []
        turns = {o.inv.call.turn for o, _ in attempts}
        for start in sorted({t - d for t in turns for d in range(REPEAT_TURN_WINDOW)}):
            window = [(o, f) for o, f in attempts if start <= o.inv.call.turn < start + REPEAT_TURN_WINDOW]
            if len(window) < REPEAT_MIN_FAILURES or not all(f for _, f in window):
                continue
            if runs and any(o is runs[-1][-1] or o in runs[-1] for o, _ in window):
                runs[-1].extend(o for o, _ in window if o not in runs[-1])
            else:
                runs.append([o for o, _ in window])
        signals.extend(_repeat_signal(run, kind, sample_id) for run in runs)
    return sorted(signals, key=lambda s: s.turn)


def _what(o: _Outcome) -> str:
    """What a call looked for: its target, or for a denied call its command / input."""
    if o.target:
        return o.target
    inp = o.inv.call.input
    return command_text(inp) if o.cls == "Bash search" else str(next(iter(inp.values()), ""))


def _repeat_signal(run: list[_Outcome], kind: str, sample_id: str) -> GapSignal:
    first, last = run[0], run[-1]
    targets = "; ".join(dict.fromkeys(clip(_what(x), 80) for x in run))
    turns = f"{first.inv.call.turn}–{last.inv.call.turn}"
    return GapSignal(
        sample_id=sample_id,
        turn=first.inv.call.turn,
        source="repeated_failure",
        tool=kind,
        target=clip(_what(first), 300),
        context=clip(f"{kind} failed {len(run)}× in turns {turns}: {targets}", 300),
        calls=tuple(x.inv.call.id for x in run),
    )
