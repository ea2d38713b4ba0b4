"""What the agent-CLI executors (``claude``, ``codex``) share: options, finding the binary and its
version, and one run skeleton (sandbox → prepare → run the process → interpret its output)."""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import anyio
from pydantic import Field

from knowmeter import defaults
from knowmeter.executors._api_errors import ApiFailure
from knowmeter.executors._isolation import (
    ProcessOutcome,
    TaskSandbox,
    minimal_env,
    run_process,
    task_sandbox,
)
from knowmeter.executors._netseal import endpoints_from
from knowmeter.executors._options import ExecutorOptions, options_hash
from knowmeter.executors._protocol import (
    ExecRequest,
    ExecResult,
    Executor,
    ExecutorError,
    ExecutorUnavailable,
    SkillInstall,
)
from knowmeter.executors._registry import ExecutorSpec
from knowmeter.executors._seal import needed_folders, seal_problem
from knowmeter.traces import ErrorKind, ToolResultEvent, Trace

#: Proxy variables every CLI executor passes through (the agent must reach its API).
PROXY_ENV = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
)


class CliOptions(ExecutorOptions):
    """Options every agent-CLI executor takes."""

    #: the CLI binary (path or name on PATH); default: on PATH, else ./node_modules/.bin/<cli>
    bin: str | None = None
    #: seconds before the whole process group is killed; default: the task's timeout, else ``defaults.AGENT_TIMEOUT_S``
    timeout_s: float | None = Field(default=None, gt=0)
    #: extra environment variables for the agent (set last; they win)
    env: dict[str, str] = Field(default_factory=dict)
    #: more variables (names or globs like ``MY_*``) to copy from knowmeter's environment
    pass_env: list[str] = Field(default_factory=list)
    #: extra command-line arguments, after knowmeter's own flags
    extra_args: list[str] = Field(default_factory=list)
    #: keep ``.claude/skills`` / ``.codex/skills`` / ``.agents/skills`` of the workspace in the copy
    keep_workspace_skills: bool = False
    #: names (globs) not copied into the task's workspace
    workspace_ignore: list[str] = Field(default_factory=lambda: list(defaults.IGNORED_DIRS))
    #: keep each task's temporary folder (for debugging); its path is in ``trace.meta["sandbox"]``
    keep_temp: bool = False
    #: run without sealing tasks from each other (``--unsealed``); only where bubblewrap cannot run
    unsealed: bool = False
    #: host folders (or files) a sealed agent may read besides the system's and its own sandbox
    #: (a tool's config, a shared dataset); read-only
    seal_allow: list[Path] = Field(default_factory=list)
    #: more URLs (or host:port) a sealed agent may connect to besides its API and the proxies its
    #: environment names (a Bedrock or Vertex endpoint, a local model server); see ``_netseal``
    seal_endpoints: list[str] = Field(default_factory=list)


def find_binary(name: str, configured: str | None, install_hint: str) -> Path:
    """The CLI to run: ``configured`` (a path or a name on PATH), else ``name`` on PATH, else
    ``./node_modules/.bin/<name>``. Raises ExecutorUnavailable with ``install_hint``."""
    if configured:
        found = shutil.which(os.path.expanduser(configured))
        if found is None:
            raise ExecutorUnavailable(f"{name}: {configured} not found or not executable; {install_hint}")
        return Path(found).absolute()
    found = shutil.which(name)
    if found is None:
        local = Path.cwd() / "node_modules" / ".bin" / name
        found = str(local) if local.is_file() and os.access(local, os.X_OK) else None
    if found is None:
        raise ExecutorUnavailable(f"{name} CLI not found on PATH; {install_hint}")
    return Path(found).absolute()


@functools.lru_cache(maxsize=16)
def _version(binary: str, mtime_ns: int) -> str:
    with tempfile.TemporaryDirectory(prefix="knowmeter-version-") as tmp:
        home = Path(tmp)
        env = minimal_env(home, home)
        try:
            proc = subprocess.run(
                [binary, "--version"],
                env=env,
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else "unknown"


def cli_version(binary: Path) -> str:
    """``<binary> --version`` (first line), run once per binary file; ``unknown`` if it fails."""
    try:
        mtime = binary.resolve().stat().st_mtime_ns
    except OSError:
        return "unknown"
    return _version(str(binary), mtime)


#: Passed-through variables that cannot change an answer: credentials and how the network is reached.
_NOT_ANSWER_SHAPING = ("*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*CREDENTIALS*", *PROXY_ENV)


def env_fingerprint(patterns: Sequence[str]) -> str:
    """A short hash of the variables ``patterns`` would pass through from this environment (names
    and values), credentials and proxy settings left out: a changed ``ANTHROPIC_MODEL`` or
    ``ANTHROPIC_BASE_URL`` changes it, a rotated API key does not."""
    shaping = sorted(
        (k, v)
        for k, v in os.environ.items()
        if any(fnmatch.fnmatchcase(k, p) for p in patterns)
        and not any(fnmatch.fnmatchcase(k.upper(), p.upper()) for p in _NOT_ANSWER_SHAPING)
    )
    return hashlib.sha256(json.dumps(shaping).encode()).hexdigest()[:12]


def binary_fingerprint(binary: Path) -> str:
    """The resolved CLI file, its size and modification time (a replaced binary changes it even
    when it reports the same ``--version``)."""
    try:
        real = binary.resolve()
        st = real.stat()
    except OSError:
        return "missing"
    return hashlib.sha256(f"{real}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:12]


def artifact_skill(request: ExecRequest) -> SkillInstall | None:
    """The artifact as a skill to install (None for the baseline)."""
    text = artifact_text(request)
    if text is None:
        return None
    return request.skill or SkillInstall("artifact", None, text)


def delivery_meta(
    sandbox: TaskSandbox, *, artifact: str | None, memory: Sequence[str], skill_dir: Path | None = None
) -> dict[str, Any]:
    """What an executor tells the pipeline about a task (``trace.meta``): its workspace root (the
    paths in the trace are mapped back to knowledge-base keys from there); how the artifact was
    delivered (``system_prompt`` / ``agents_md``: in every request; ``skill``: only once invoked;
    None: baseline); the memory files (workspace keys) the agent was given; and for an installed
    skill its folder name and the sandbox folder standing for ``.claude/skills/<name>``."""
    meta: dict[str, Any] = {
        "workspace_root": str(sandbox.workspace),
        "artifact_delivery": artifact,
        "memory_delivered": [m for m in memory if (sandbox.workspace / m).is_file()],
        "context_files": context_files(sandbox),
    }
    if skill_dir is not None:
        key = f".claude/skills/{skill_dir.name}"
        meta["skill_folder"] = skill_dir.name
        meta["path_prefixes"] = {str(skill_dir): key}
        if skill_dir.is_relative_to(sandbox.home):  # the agent may write it as ~/…
            meta["path_prefixes"]["~/" + skill_dir.relative_to(sandbox.home).as_posix()] = key
    return meta


#: Files an agent CLI reads at start by convention (instructions, settings, MCP servers, skills),
#: relative to the workspace (``work/``) or the private HOME (``home/``).
_CONTEXT_FILES = {
    "work": (
        "CLAUDE.md",
        "CLAUDE.local.md",
        ".claude/CLAUDE.md",
        ".claude/settings.json",
        ".claude/settings.local.json",
        "AGENTS.md",
        "AGENTS.override.md",
        ".mcp.json",
        ".codex/config.toml",
    ),
    "home": (".claude/CLAUDE.md", ".claude/settings.json", ".claude.json", ".codex/AGENTS.md", ".codex/config.toml"),
}
_SKILL_DIRS = {
    "work": (".claude/skills", ".agents/skills", ".codex/skills"),
    "home": (".claude/skills", ".codex/skills"),
}


#: Host-wide (administrator) folders the CLIs read whatever HOME is — managed settings, policy,
#: instructions, skills. They stay visible in the seal (an administrator's policy may be what lets
#: the agent run at all), the same in both arms, and every file in them is recorded.
MANAGED_DIRS: dict[str, Path] = {"etc/claude-code": Path("/etc/claude-code"), "etc/codex": Path("/etc/codex")}
_MANAGED_MAX = 50


def _managed_files() -> dict[str, str]:
    found: dict[str, str] = {}
    for label, folder in MANAGED_DIRS.items():
        if folder.is_dir():
            for path in sorted(p for p in folder.rglob("*") if p.is_file())[:_MANAGED_MAX]:
                key = f"{label}/{path.relative_to(folder).as_posix()}"
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:8]
    return found


def context_files(sandbox: TaskSandbox) -> dict[str, str]:
    """What the agent can load at start (``work/CLAUDE.md``, ``home/.claude/skills/x/SKILL.md``,
    ``etc/claude-code/managed-settings.json`` …) with each file's sha256[:8]: in a sealed task
    nothing else outside the sandbox exists, so this is everything; recorded in the trace so two
    arms' contexts can be compared."""
    roots = {"work": sandbox.workspace, "home": sandbox.home}
    found: dict[str, str] = _managed_files()
    for label, root in roots.items():
        names = [*_CONTEXT_FILES[label]]
        for skills in _SKILL_DIRS[label]:
            if (root / skills).is_dir():
                names += sorted(p.relative_to(root).as_posix() for p in (root / skills).glob("*/SKILL.md"))
        for name in names:
            path = root / name
            if path.is_file():
                found[f"{label}/{name}"] = hashlib.sha256(path.read_bytes()).hexdigest()[:8]
    return found


def artifact_text(request: ExecRequest) -> str | None:
    """The variant's artifact text: the system text, else the skill's text (None for the baseline)."""
    if request.system is not None:
        return request.system
    return request.skill.text if request.skill is not None else None


async def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` in a worker thread."""
    await anyio.to_thread.run_sync(functools.partial(path.write_text, text, encoding="utf-8"))
    return path


CliOptionsT = TypeVar("CliOptionsT", bound=CliOptions)


class CliAgentExecutor(Executor, ABC, Generic[CliOptionsT]):
    """One agent CLI run per task, isolated: a private workspace copy and HOME, a minimal
    environment, the process group killed on timeout. Subclasses build the command line and turn
    the process's output into an ExecResult."""

    name: str
    non_llm: bool = False
    sealed: bool
    #: stops a task at its timeout itself and returns the partial trace (see ``Executor``)
    enforces_timeout = True
    #: environment variables (names or globs) passed through by default
    default_pass_env: ClassVar[tuple[str, ...]] = ()

    def __init__(self, binary: Path, options: CliOptionsT, model: str | None, *, sealed: bool = True) -> None:
        self.binary = binary
        self.options = options
        self.model = model
        #: whether each task's agent runs sealed from every other task (see ``_seal``)
        self.sealed = sealed
        if sealed:  # an endpoint the seal's network cannot relay: refused now, not at every task
            env = minimal_env(Path(), Path(), pass_env=self.pass_env(), extra=self.extra_env())
            try:
                endpoints_from(self.api_urls(), env)
            except ValueError as exc:
                raise ExecutorUnavailable(f"{self.name}: {exc}") from None

    def pass_env(self) -> list[str]:
        """Names and globs of the variables copied from knowmeter's environment into the agent's."""
        return [*self.default_pass_env, *PROXY_ENV, *self.options.pass_env]

    def identity(self) -> str:
        """CLI version and binary, model, options, sealing, and the values of the passed-through
        variables that can change the agent's answer (``ANTHROPIC_MODEL`` …; see ``env_fingerprint``)."""
        seal = "sealed" if self.sealed else "unsealed"
        return (
            f"{self.name}:{cli_version(self.binary)}:{binary_fingerprint(self.binary)}:{self.model}:"
            f"{options_hash(self.options)}:{seal}:env-{env_fingerprint(self.pass_env())}"
        )

    def base_env(self) -> dict[str, str]:
        """Fixed variables of this CLI (set before ``options.env`` and the request's env)."""
        return {}

    def extra_env(self) -> dict[str, str]:
        """The variables set in every task's environment over those passed through: ``base_env``,
        then option ``env``."""
        return {**self.base_env(), **self.options.env}

    def cli_api_urls(self) -> dict[str, str]:
        """The API this CLI is configured to reach (what it is → URL)."""
        return {}

    def api_urls(self) -> dict[str, str]:
        """Every URL a sealed agent may reach (see ``_netseal``): the CLI's API and option
        ``seal_endpoints``; ``*_BASE_URL`` and proxy variables of the agent's environment are
        added per task."""
        extra = {f"option seal_endpoints[{i}]": u for i, u in enumerate(self.options.seal_endpoints)}
        return {**self.cli_api_urls(), **extra}

    @abstractmethod
    async def prepare(self, request: ExecRequest, sandbox: TaskSandbox) -> tuple[list[str], Path | None]:
        """Install the artifact in the sandbox; return the argv and a file to feed on stdin."""

    @abstractmethod
    def delivered(self, request: ExecRequest, sandbox: TaskSandbox) -> dict[str, Any]:
        """``delivery_meta`` of a task (called once the artifact is installed, before the agent runs)."""

    @abstractmethod
    async def interpret(self, request: ExecRequest, sandbox: TaskSandbox, outcome: ProcessOutcome) -> ExecResult:
        """Turn the finished process (and any session files in the sandbox) into an ExecResult."""

    def pending_api_failure(self, outcome: ProcessOutcome) -> ApiFailure | None:
        """The API error the CLI was still retrying when its timeout stopped it (None: none seen)."""
        return None

    def timeout_for(self, request: ExecRequest) -> float:
        """Seconds the task may run: the option, else the task's timeout, else ``defaults.AGENT_TIMEOUT_S``."""
        return self.options.timeout_s or request.timeout_s or defaults.AGENT_TIMEOUT_S

    def sandbox(self, request: ExecRequest) -> AbstractAsyncContextManager[TaskSandbox]:
        """The task's isolated workspace, HOME and environment (see ``_isolation``)."""
        opts = self.options
        return task_sandbox(
            request,
            pass_env=self.pass_env(),
            extra_env=self.extra_env(),
            keep_workspace_skills=opts.keep_workspace_skills,
            workspace_ignore=opts.workspace_ignore,
            keep=opts.keep_temp,
            sealed=self.sealed,
            expose=[*needed_folders(self.binary), *opts.seal_allow],
            api_urls=self.api_urls(),
        )

    async def run(self, request: ExecRequest) -> ExecResult:
        opts = self.options
        timeout = self.timeout_for(request)
        started = time.perf_counter()
        async with self.sandbox(request) as sandbox:
            argv, stdin_path = await self.prepare(request, sandbox)
            delivered = self.delivered(request, sandbox)  # before the agent can add files
            try:
                outcome = await run_process(
                    sandbox.command(argv),
                    cwd=sandbox.workspace,
                    env=sandbox.env,
                    timeout_s=timeout,
                    stdin_path=stdin_path,
                )
            except OSError as exc:
                raise ExecutorError(f"{self.name}: could not start {self.binary}: {exc}") from exc
            result = await self.interpret(request, sandbox, outcome)
            result.trace.meta.update(delivered, sealed=self.sealed)
            if result.error is None:
                result.error = broken_tools(self.name, result.trace)
            if opts.keep_temp:
                result.trace.meta["sandbox"] = str(sandbox.root)
        result.latency_ms = (time.perf_counter() - started) * 1000
        if outcome.timed_out:
            failure, note = self.pending_api_failure(outcome), f" (still retrying at the {timeout:g}s timeout)"
            if failure is not None:
                raise_if_retryable(self.name, failure, note)
                result.error = failure.message(self.name) + note
            else:
                result.error = f"{self.name} timed out after {timeout:g}s (process group killed)"
            result.timed_out = True
        elif outcome.returncode != 0 and not outcome.stdout.strip():
            # no event at all: a crash or a start-up failure, worth a retry
            raise ExecutorError(process_error(self.name, outcome, None) or f"{self.name} failed")
        return result


def sealing(name: str, spec: ExecutorSpec, options: CliOptions) -> bool:
    """Whether executor ``name`` seals its tasks: yes, unless the user opted out (``--unsealed``,
    option ``unsealed``). Raises ExecutorUnavailable when sealing is wanted but cannot work here."""
    if spec.unsealed or options.unsealed:
        return False
    problem = seal_problem()
    if problem is not None:
        raise ExecutorUnavailable(
            f"{name}: cannot seal tasks from each other: {problem}; "
            "or run unsealed, where every task can read the others' files: --unsealed"
        )
    return True


def broken_tools(name: str, trace: Trace) -> str | None:
    """Why the agent's tools could not work (at least half of its tool calls failed because their
    sandbox could not start them), or None. Such a task is an executor error: an environment
    fault, never graded and never read as knowledge gaps."""
    results = [r for r in trace.events if isinstance(r, ToolResultEvent)]
    broken = [r for r in results if r.error_kind is ErrorKind.SANDBOX]
    if not broken or len(broken) * 2 < len(results):
        return None
    first = " ".join(broken[0].output.split())[:200]
    return (
        f"{name}'s tools could not run in their sandbox: {len(broken)} of {len(results)} tool calls failed "
        f"with '{first}' (an environment fault, not the agent's answer; see README 'What a sealed agent sees')"
    )


def raise_if_retryable(name: str, failure: ApiFailure, note: str = "") -> None:
    """Raise ``ExecutorError`` (knowmeter's retry policy applies) for a failure worth retrying."""
    if failure.retryable:
        raise ExecutorError(failure.message(name) + note)


def process_error(name: str, outcome: ProcessOutcome, reported: str | None) -> str | None:
    """The error of a finished CLI run: what the run reported, else a non-zero exit with stderr."""
    if reported:
        return reported
    if outcome.returncode not in (0, None) and not outcome.timed_out:
        tail = outcome.stderr_tail()
        return f"{name} exited with {outcome.returncode}" + (f": {tail}" if tail else "")
    return None
