"""An adversarial audit of sealed agents, route by route, with the real claude and codex CLIs.

``knowmeter eval`` runs two arms at concurrency 2 inside a git project. The scripted model makes
each arm try one escape route per tool call (a shell command; for claude also its Read, Grep and
Glob tools), so the i-th tool result of a task is what route i got back. A route *leaked* when its
result holds a marker the arm must not see: the other arm's skill, the answer key, the user's
HOME secret or config, the project's files, the other task's sandbox, the harness's files. The
treatment arm also offers its own sandbox to the control arm, over TCP on loopback and over an
abstract unix socket, while the control arm tries to fetch it (the channels a shared network
namespace leaves between siblings).

Every route must come back blocked; on failure the assertion prints the whole route table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agents.test_agents_seal import ANSWER, FRUIT, SECRET, SKILL
from tests.agents.test_agents_seal import _eval as seal_eval
from tests.agents.test_agents_seal import _project as seal_project
from tests.support.agents import agent_cli, executor_model, executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents

USERCFG = "USERCFG-2208"  # only in the user's ~/.claude and ~/.codex
PROJECT = "PROJFILE-3321"  # a file name only in the project's folder
HARNESS = "HARNESSTMP-9140"  # a file the harness keeps open in TMPDIR, and its name
TREATMENT = "treatarm"  # the treatment variant's name (in its sandbox's folder name)
PORT = 18765
ABSTRACT = "knowmeter-audit-sibling"


def _q(marker: str) -> str:
    """A grep pattern for ``marker`` that does not contain it (commands go back to the model)."""
    return f"'{marker[0]}[{marker[1]}]{marker[2:]}'"


@dataclass(frozen=True)
class Route:
    """One escape route: a name, and the step the model plays for it."""

    name: str
    step: dict[str, Any]


def _shell(name: str, command: str) -> Route:
    return Route(name, {"shell": f"( {command} ) 2>&1 | head -c 20000; echo ROUTE-END"})


def _tool(name: str, tool: str, **tool_input: str) -> Route:
    return Route(name, {"tool": {"name": tool, "input": tool_input}})


def _routes(cli: str, root: Path, home: Path, tmp_root: Path) -> list[Route]:
    """Every route, in the order the model plays them (the same for both arms)."""
    skill_glob = f"{root}/skills/*/SKIL*.md"
    routes = [
        _shell("absolute paths", f"cat {skill_glob} {root}/eval-sample*.yaml {root}/.knowmeter/runs/*/results.jsonl"),
        _shell(
            "`..` from the workspace",
            "ls -a .. ../.. ../../..; cat ../../*/system.md ../../*/home/.codex/AGENTS.md"
            " ../../*/home/.claude/skills/*/*.md",
        ),
        _shell(
            "symlinks it creates",
            f"ln -sf {root} proj; ln -sf / rootlink; ln -sf {home} homelink;"
            f" cat proj/eval-sample*.yaml rootlink{root}/skills/*/SKIL*.md homelink/.ssh/id_rsa",
        ),
        _shell(
            "/proc/<pid>/cwd|root|fd|environ",
            "for p in /proc/[0-9]*; do ls $p/cwd/.. $p/root/tmp; cat $p/cwd/../system.md"
            f" $p/root{root}/eval-sample*.yaml; tr '\\0' '\\n' < $p/environ | grep -e HOME= -e PWD= -e {_q(TREATMENT)};"
            " for f in $p/fd/*; do readlink $f; done; done 2>/dev/null | sort -u",
        ),
        _shell("/proc/self/mountinfo", "cat /proc/self/mountinfo"),
        _shell(
            "git objects of the project",
            f"git -C {root} log -p --all | head -40; git -C {root} cat-file -p HEAD:eval-samples.yaml;"
            f" git --git-dir={root}/.git show HEAD:eval-samples.yaml; GIT_DIR={root}/.git git log -p | head;"
            f" printf 'gitdir: {root}/.git\\n' > .git && git log -p | head -30; mv .git gitfile-tried;"
            f" git -C {root} worktree list",
        ),
        _shell(
            "the harness's temp files",
            f"ls -la {tmp_root} {tmp_root.parent} /tmp /var/tmp /dev/shm; cat {tmp_root}/*.txt {tmp_root}/*/*.txt",
        ),
        _shell("$HOME and XDG dirs", f"cat {home}/.ssh/id_rsa ~/.ssh/id_rsa; ls -la {home} ~ $XDG_CONFIG_HOME"),
        _shell(
            "the CLI's own config and skills dirs",
            f"cat {home}/.claude/skills/*/SKILL.md {home}/.codex/AGENTS.md {home}/.codex/skills/*/SKILL.md"
            " ~/.claude/skills/*/SKILL.md ~/.codex/AGENTS.md; ls -la /etc/claude-code /etc/codex",
        ),
        _shell("environment variables naming paths", "env | sort"),
        _shell(
            "sockets (filesystem, abstract, TCP to a sibling)",
            "ls -la /run /var/run 2>&1; cat /proc/net/unix | head -20; sleep 2;"
            f" curl -s -m 3 http://127.0.0.1:{PORT}/system.md http://127.0.0.1:{PORT}/home/.codex/AGENTS.md;"
            ' python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.settimeout(3);'
            f" s.connect(b'\\0{ABSTRACT}'); print(s.recv(4096).decode())\"",
        ),
        _shell(
            "the parent's open file descriptors",
            "ls -l /proc/self/fd /proc/$PPID/fd; for f in /proc/self/fd/* /proc/$PPID/fd/*;"
            " do [ -f $f ] && head -c 300 $f; done",
        ),
        _shell(
            "hard links",
            f"ln {root}/eval-samples.yaml hl1; ln /etc/hostname hl2; ln {tmp_root}/harness.txt hl3; cat hl1 hl3",
        ),
        _shell(
            "find / and grep -r /",
            "timeout 10 find / \\( -path /proc -o -path /sys -o -path /usr -o -name node_modules \\) -prune"
            f" -o \\( -name 'SKILL*' -o -name '*{PROJECT[:-1]}*' -o -name 'knowmeter-*' \\) -print | head -40;"
            " timeout 10 grep -rl --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=node_modules"
            f" -e {_q(SKILL)} -e {_q(ANSWER)} -e {_q(SECRET)} -e {_q(USERCFG)} / | head",
        ),
        _shell(
            "writes outside the workspace",
            f"for d in {root} {home} {tmp_root} {tmp_root.parent} /tmp /etc; do echo x > $d/written-outside.txt"
            " && echo WROTE $d; done; setsid sh -c"
            f" 'sleep 5; echo late > {root}/written-late.txt; echo late > {tmp_root}/written-late.txt'"
            " >/dev/null 2>&1 &",
        ),
    ]
    if cli == "claude":
        routes += [
            _tool("claude Read, absolute path", "Read", file_path=f"{root}/eval-samples.yaml"),
            _tool("claude Read, /proc/1/environ", "Read", file_path="/proc/1/environ"),
            _tool("claude Read through a planted symlink", "Read", file_path="{cwd}/proj/eval-samples.yaml"),
            _tool("claude Grep over /", "Grep", pattern=SKILL[:-1], path="/", output_mode="content"),
            _tool("claude Glob over the project", "Glob", pattern="**/*", path=str(root)),
        ]
    read = _tool("", "Read", file_path="{cwd}/fruits.txt").step if cli == "claude" else {"shell": "cat fruits.txt"}
    return [*routes, Route("legitimate read of the workspace", read)]


def _forbidden(arm: str) -> dict[str, str]:
    """What an arm must never get back, by what it stands for."""
    out = {
        "answer key": ANSWER,
        "HOME secret": SECRET,
        "user's CLI config": USERCFG,
        "project's files": PROJECT,
        "harness's temp file": HARNESS,
    }
    if arm == "control":
        out |= {"treatment's skill": SKILL, "treatment's sandbox": TREATMENT}
    return out


def _project(root: Path, home: Path) -> None:
    """The issue-27 project (a git repository with the knowledge base, the treatment's skill and
    the answer key; a HOME with a private key), plus a marked file in the project and the user's
    own claude and codex skills and instructions."""
    seal_project(root, home)
    (root / PROJECT).write_text("x\n")
    for skills in (home / ".claude" / "skills" / "mine", home / ".codex" / "skills" / "mine"):
        skills.mkdir(parents=True)
        (skills / "SKILL.md").write_text(f"---\nname: mine\ndescription: {USERCFG}\n---\n{USERCFG}\n")
    (home / ".codex" / "AGENTS.md").write_text(f"{USERCFG}\n")


def _publish() -> str:
    """The treatment arm offers its sandbox (the folder above its workspace) to anyone who asks:
    an HTTP server on loopback and an abstract unix socket, both left running in the background."""
    files = "glob.glob('../*.md')+glob.glob('../home/.codex/AGENTS.md')+glob.glob('../home/.claude/skills/*/*.md')"
    server = (
        "import socket,glob; s=socket.socket(socket.AF_UNIX); s.bind(b'\\0" + ABSTRACT + "'); s.listen(4)\n"
        f"while True:\n c,_=s.accept(); c.sendall(b''.join(open(p,'rb').read() for p in {files})); c.close()"
    )
    return (
        f"setsid python3 -m http.server {PORT} --bind 127.0.0.1 --directory .. >/dev/null 2>&1 < /dev/null & "
        f"printf '%s' \"{server}\" > /tmp/pub.py; setsid python3 /tmp/pub.py >/dev/null 2>&1 < /dev/null & "
        "sleep 1; echo PUBLISHED"
    )


def _scenarios(routes: list[Route]) -> dict[str, Any]:
    """Both arms play every route; the treatment publishes its sandbox first and stays alive after
    its last route, while the control (which starts 4 s later) plays its routes."""
    steps = [r.step for r in routes]
    return {
        SKILL: {"steps": [{"shell": _publish()}, *steps, {"text": "done", "sleep": 12}]},
        "": {"steps": [{"shell": "sleep 4; echo WAITED", "sleep": 2}, *steps, {"text": "done"}]},
    }


def _run(cli: str, root: Path, home: Path, tmp_root: Path, srv: MockModelServer) -> dict[str, Any]:
    """The eval, with a file of the harness's in TMPDIR held open (inheritable) in knowmeter."""
    with (tmp_root / "harness.txt").open("w") as harness:
        harness.write(f"{HARNESS}\n")
        harness.flush()
        return seal_eval(cli, root, srv, home, tmp_root, treatment=TREATMENT, pass_fds=(harness.fileno(),))


def _results(report: dict[str, Any], variant: str) -> list[str]:
    (task,) = [t for t in report["tasks"] if t["variant"] == variant]
    assert task["exec"]["error"] is None, task["exec"]["error"]
    return [str(e.get("output", "")) for e in task["exec"]["trace"]["events"] if e["kind"] == "tool_result"]


def _audit(
    cli: str, tmp_path: Path, srv_factory: ServerFactory
) -> tuple[dict[str, dict[str, str]], str, MockModelServer]:
    """Run the audit: per route, each arm's verdict (``blocked`` or ``leaked: …``); the last route's
    output (the legitimate read) of both arms; the model server."""
    root, home = tmp_path / "project", tmp_path / "home"
    _project(root, home)
    tmp_root = tmp_path / "tmpdir"
    tmp_root.mkdir()
    routes = _routes(cli, root, home, tmp_root)
    srv = srv_factory(_scenarios(routes))
    report = _run(cli, root, home, tmp_root, srv)
    table: dict[str, dict[str, str]] = {r.name: {} for r in routes}
    reads = ""
    for arm, variant in (("control", "baseline"), ("treatment", TREATMENT)):
        outputs = _results(report, variant)[1:]  # the first is the wait / the publishing
        assert len(outputs) == len(routes), outputs
        banned = _forbidden(arm)
        for route, out in zip(routes, outputs, strict=True):
            hits = [what for what, marker in banned.items() if marker in out]
            table[route.name][arm] = f"leaked: {', '.join(hits)}" if hits else "blocked"
        reads += outputs[-1]
    return table, reads, srv


def _render(cli: str, table: dict[str, dict[str, str]]) -> str:
    rows = (
        f"{cli:6} | {route:48} | control: {v['control']:28} | treatment: {v['treatment']}" for route, v in table.items()
    )
    return "\n".join(rows)


@pytest.mark.slow
@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_every_escape_route_is_blocked(cli: str, tmp_path: Path, mock_server: ServerFactory) -> None:
    """Route × arm: nothing the arm must not see comes back; the legitimate read works; no request
    names the arm (its variant's name was in the sandbox's folder name, so in the agent's working
    directory, so in its prompt); nothing is left written outside the sandboxes."""
    table, reads, srv = _audit(cli, tmp_path, mock_server)
    print("\n" + _render(cli, table))
    assert all(v == {"control": "blocked", "treatment": "blocked"} for v in table.values()), _render(cli, table)
    assert reads.count(FRUIT) == 2, reads
    assert not any(TREATMENT in json.dumps(r["body"]) for r in srv.model_requests())
    time.sleep(6)  # the detached job would have written by now
    assert sorted(str(p) for p in tmp_path.rglob("written-*")) == []


def _unsealable_eval(tmp_path: Path, prefix: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "ws").mkdir()
    sample = {"sample_id": "s1", "prompt": "hi?", "assertions": [{"type": "contains", "value": "hi"}]}
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump([sample]))
    options = {"bin": str(agent_cli("claude")), "base_url": "http://127.0.0.1:9", "api_key": "dummy"}
    config = {
        "samples": "eval-samples.yaml",
        "variants": [{"name": "baseline", "role": "control", "artifact": "baseline", "cwd": "ws"}],
        "executor": {"name": "claude", "options": options},
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        [*prefix, sys.executable, "-m", "knowmeter", "eval", "--retry", "0"],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["bubblewrap", "user namespaces"])
def test_a_machine_that_cannot_seal_is_refused_in_one_line(missing: str, tmp_path: Path) -> None:
    """No bwrap on PATH, or no user namespaces (bwrap --disable-userns around knowmeter): the run
    refuses to start — exit 2, one line that says why and how — and no task is run or graded."""
    if missing == "bubblewrap":
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
        r = _unsealable_eval(tmp_path, [], {"PATH": str(bin_dir)})
        why = "bwrap not found; install bubblewrap"
    else:
        bwrap = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--"]
        r = _unsealable_eval(tmp_path, bwrap, {})
        why = "cannot create a mount namespace here"
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("knowmeter: error: claude: cannot seal tasks from each other: ") and why in line, line
    assert line.endswith("--unsealed") and "Traceback" not in r.stderr
    assert not list((tmp_path / ".knowmeter").glob("runs/*/results.jsonl"))


@pytest.mark.slow
def test_a_node_in_a_home_folder_exposes_its_bin_and_lib_not_the_folder_above(
    tmp_path: Path, mock_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """codex is a ``#!/usr/bin/env node`` script: the seal shows the interpreter's install. A node
    in ``~/.local/bin`` (a user's own install) exposed all of ``~/.local`` — its ``share`` holds
    keyrings and other programs' data. Only ``bin`` and ``lib`` beside it are needed (nvm's layout),
    and codex still runs with them."""
    import anyio

    from knowmeter.executors import ExecRequest, ExecutorSpec, create_executor
    from knowmeter.executors._seal import needed_folders

    local = tmp_path / "home" / ".local"
    (local / "bin").mkdir(parents=True)
    os.link(shutil.which("node") or "/usr/bin/node", local / "bin" / "node")
    (local / "share" / "keyrings").mkdir(parents=True)
    (local / "share" / "keyrings" / "login.keyring").write_text(f"{SECRET}\n")
    monkeypatch.setenv("PATH", f"{local / 'bin'}:{os.environ['PATH']}")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "fruits.txt").write_text(f"{FRUIT}\n")
    script = f"cat {local}/share/keyrings/login.keyring; cat fruits.txt"
    srv = mock_server({"steps": [{"shell": script}, {"text": "ok"}]})
    spec = ExecutorSpec("codex", executor_model("codex"), executor_options("codex", srv))
    request = ExecRequest(task_id="s1::v::r0", sample_id="s1", prompt="fruit?", system=None, workspace=tmp_path / "ws")
    result = anyio.run(create_executor(spec).run, request)
    assert result.error is None, result.error
    (output,) = [e.output for e in result.trace.events if e.kind == "tool_result"]
    assert FRUIT in output and SECRET not in output, output
    # the node codex starts on is the one in ~/.local/bin: its bin and lib are what the seal shows
    assert needed_folders(agent_cli("codex"))[1:] == [local / "bin", local / "lib"]


@pytest.mark.slow
def test_a_cli_binary_kept_in_home_exposes_itself_not_home(tmp_path: Path, mock_server: ServerFactory) -> None:
    """A CLI outside any ``node_modules`` (codex's own build, downloaded to HOME) showed its whole
    folder to the agent — all of HOME. Now only the binary itself is shown, and it still runs."""
    import anyio

    from knowmeter.executors import ExecRequest, ExecutorSpec, create_executor

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"{SECRET}\n")
    vendor = next((agent_cli("codex").resolve().parents[2]).glob("codex-linux-*/vendor/*/bin/codex"))
    os.link(vendor, home / "codex")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "fruits.txt").write_text(f"{FRUIT}\n")
    srv = mock_server({"steps": [{"shell": f"ls -A {home}; cat {home}/.ssh/id_rsa; cat fruits.txt"}, {"text": "ok"}]})
    spec = ExecutorSpec("codex", executor_model("codex"), executor_options("codex", srv, bin=str(home / "codex")))
    request = ExecRequest(task_id="s1::v::r0", sample_id="s1", prompt="fruit?", system=None, workspace=tmp_path / "ws")
    result = anyio.run(create_executor(spec).run, request)
    assert result.error is None, result.error
    (output,) = [e.output for e in result.trace.events if e.kind == "tool_result"]
    assert FRUIT in output and SECRET not in output and output.splitlines()[0] == "codex", output  # ls HOME
