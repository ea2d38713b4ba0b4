"""Retried commands: the same non-search action failing again and again (a commit a hook
rejects six times, a test run failing in every turn). Not a gap source of the spec — its
repeated failure (§4.4) is about searches — so it is its own signal, ``retried_command``,
reported beside the gap signals and counted in the gap rate only when the user asks.

Rule: calls that are not searches (``search_class`` is None) are keyed by agent, tool and, for
Bash, the command's *action*: its programs other than ``cd`` / ``echo`` …, each with its
subcommand (``git add && git commit``, ``npm test``, ``python && cat``) — whichever of them
failed, the agent ran the same thing again. A launcher is not the action: ``uv run X``,
``poetry run X``, ``npx X`` and ``python -m X`` key as ``X``, so ``pytest`` and
``python -m pytest`` refused in turn after turn are one run. An action fails when its result is a
failure that says something about the task (a non-zero exit, a missing path, a refusal by a
hook or policy, any other error); a missing program (exit 127), a timeout, a cancelled sibling,
a user's rejection, tool misuse and API errors are not counted and do not interrupt. A success
of the same action ends its run. A run fires once it has failed in ``REPEAT_MIN_FAILURES``
different turns (a batch of parallel calls is one attempt); there is no turn window: between
two attempts the agent usually edits something to satisfy the check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import dropwhile

from knowmeter.analysis._commands import command_text, parse_command
from knowmeter.analysis._model import GapSignal
from knowmeter.analysis._searches import REPEAT_MIN_FAILURES, search_class
from knowmeter.analysis._text import clip
from knowmeter.traces import ErrorKind, ToolInvocation, ToolStatus

#: failure kinds that say nothing about the action (the same ones failed searches leave out,
#: except permission denials: a hook refusing the same commit again and again is the point)
_NOT_COUNTED = frozenset(
    {
        ErrorKind.COMMAND_MISSING,
        ErrorKind.TIMEOUT,
        ErrorKind.CANCELLED_SIBLING,
        ErrorKind.USER_REJECTED,
        ErrorKind.TOOL_MISUSE,
        ErrorKind.API_ERROR,
        ErrorKind.SANDBOX,
        ErrorKind.EMPTY_SEARCH,
    }
)
#: ``X run PROGRAM`` launchers and ``X PROGRAM`` executors: the action is the program
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pipx"})
_EXECUTORS = frozenset({"npx", "pnpx", "bunx", "uvx"})
_PYTHON = re.compile(r"^python[0-9.]*$")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]*$")
_ERROR_WORD = re.compile(r"\b(?:error|failed|fatal|denied|rejected)\b", re.I)  # the line worth quoting


def action_key(inv: ToolInvocation) -> str:
    """What a non-search call does: ``Bash git commit``, ``Bash pytest``, ``Edit``."""
    if inv.call.tool != "Bash":
        return inv.call.tool
    steps: list[str] = []
    for st in parse_command(command_text(inv.call.input)).relevant:
        verb, args = _launched(st.verb, st.args)
        first = next((a for a in args if not a.startswith("-")), "")
        step = f"{verb} {first}" if _SUBCOMMAND.match(first) else verb
        if not steps or steps[-1] != step:
            steps.append(step)
    return " ".join(["Bash", " && ".join(steps)]) if steps else "Bash"


def _launched(verb: str, args: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The program a launcher runs (``uv run pytest`` → ``pytest``, ``python -m pytest`` →
    ``pytest``); any other command as it is."""
    while True:
        if verb in _RUNNERS and args[:1] == ("run",):
            rest = args[1:]
        elif verb in _EXECUTORS:
            rest = args
        elif _PYTHON.match(verb) and args[:1] == ("-m",) and len(args) > 1:
            rest = args[1:]
        else:
            return verb, args
        rest = tuple(dropwhile(lambda a: a.startswith("-"), rest))
        if not rest:
            return verb, args
        verb, args = rest[0].rsplit("/", 1)[-1], rest[1:]


def retry_signals(invocations: Sequence[ToolInvocation], *, sample_id: str) -> list[GapSignal]:
    """One ``retried_command`` signal per run of a non-search action that failed in 3+ turns
    (``invocations``: a trace's ``Trace.invocations()``)."""
    runs: dict[tuple[str | None, str], list[ToolInvocation]] = {}
    finished: list[list[ToolInvocation]] = []
    for inv in invocations:
        r = inv.result
        if r is None or r.status in (ToolStatus.UNKNOWN, ToolStatus.CANCELLED) or search_class(inv) is not None:
            continue
        key = (inv.call.agent_id, action_key(inv))
        if r.status == ToolStatus.SUCCESS:
            finished.append(runs.pop(key, []))
        elif r.error_kind not in _NOT_COUNTED and r.exit_code != 127:
            runs.setdefault(key, []).append(inv)
    finished.extend(runs.values())
    signals = [_signal(run, sample_id) for run in finished if len({x.call.turn for x in run}) >= REPEAT_MIN_FAILURES]
    return sorted(signals, key=lambda s: s.turn)


def _signal(run: list[ToolInvocation], sample_id: str) -> GapSignal:
    first, last = run[0], run[-1]
    action = action_key(first)
    turns = sorted({x.call.turn for x in run})
    kinds = sorted({(x.result.error_kind or ErrorKind.OTHER).value for x in run if x.result is not None})
    said = [
        x
        for x in (last.result.output if last.result is not None else "").splitlines()
        if x.strip() and not x.startswith("Exit code")
    ]
    line = next((x for x in said if _ERROR_WORD.search(x)), said[0] if said else "")
    return GapSignal(
        sample_id=sample_id,
        turn=first.call.turn,
        source="retried_command",
        tool=first.call.tool,
        target=action.removeprefix("Bash "),
        context=clip(
            f"{action} failed {len(run)}× in {len(turns)} turns ({turns[0]}–{turns[-1]}; {', '.join(kinds)}): {line}",
            300,
        ),
        calls=tuple(x.call.id for x in run),
    )
