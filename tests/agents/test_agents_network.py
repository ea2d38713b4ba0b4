"""A sealed agent's network (``executors/_netseal``): its own network namespace, where its model
API (relayed by name or loopback address and port) is reachable and nothing else is — no other
sealed task's loopback server or abstract unix socket, no other port of the host."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from knowmeter.executors import ExecRequest
from knowmeter.executors._isolation import run_process, task_sandbox
from knowmeter.executors._netseal import endpoints_from, hosts_file
from knowmeter.executors._seal import Seal

pytestmark = pytest.mark.agents

MARKER = "SIBLINGSKILL-5150"


def _serve(reply: bytes) -> tuple[socket.socket, int]:
    """A TCP server on the host's loopback answering every connection with ``reply``."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def loop() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))

    threading.Thread(target=loop, daemon=True).start()
    return server, server.getsockname()[1]


@pytest.fixture
def api() -> Iterator[int]:
    server, port = _serve(b"MODEL-API-OK")
    yield port
    server.close()


@pytest.fixture
def other() -> Iterator[int]:
    server, port = _serve(b"OTHER-SERVICE")
    yield port
    server.close()


def _sealed(tmp_path: Path, script: str, api_urls: dict[str, str]) -> str:
    """``sh -c script`` run sealed, as an executor runs its agent; its stdout and stderr."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    request = ExecRequest(task_id="s1::v::r0", sample_id="s1", prompt="", system=None, workspace=tmp_path / "ws")

    async def go() -> str:
        async with task_sandbox(request, tmp_root=tmp_path, sealed=True, api_urls=api_urls) as sb:
            outcome = await run_process(sb.command(["sh", "-c", script]), cwd=sb.workspace, env=sb.env, timeout_s=60)
        return (outcome.stdout + outcome.stderr).decode()

    return anyio.run(go)


def test_the_agent_reaches_its_api_by_address_and_by_name_and_nothing_else(
    tmp_path: Path, api: int, other: int
) -> None:
    """The API given as ``http://127.0.0.1:PORT`` and as ``http://localhost:PORT`` answers through
    the relay; another port on the host's loopback does not exist for the agent."""
    script = (
        f"curl -s -m 5 http://127.0.0.1:{api}/v1; echo; curl -s -m 5 http://localhost:{api}/v1; echo;"
        f" curl -s -m 5 http://127.0.0.1:{other}/ || echo OTHER-UNREACHABLE"
    )
    out = _sealed(tmp_path, script, {"api": f"http://127.0.0.1:{api}", "named": f"http://localhost:{api}/v1"})
    assert out.count("MODEL-API-OK") == 2, out
    assert "OTHER-SERVICE" not in out and "OTHER-UNREACHABLE" in out, out


def test_a_named_endpoint_is_mapped_to_the_relay_in_the_seals_hosts_file(tmp_path: Path) -> None:
    """``api.example.invalid`` (no such host anywhere) resolves to the relay inside the seal, and
    the relay listens on its port; nothing else resolves (the host's DNS is not reachable)."""
    endpoints = endpoints_from({"api": "https://api.anthropic.com/v1"}, {"HTTPS_PROXY": "http://proxy.corp:3128"})
    assert [(e.host, e.port) for e in endpoints] == [("api.anthropic.com", 443), ("proxy.corp", 3128)]
    hosts = hosts_file(endpoints)
    assert hosts is not None and "127.0.0.1 localhost api.anthropic.com proxy.corp" in hosts
    script = (
        "getent ahosts api.example.invalid | cut -d' ' -f1 | sort -u | tr '\\n' ' '; echo;"
        " grep -c ':01BB [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6; getent hosts example.org || echo NO-DNS"
    )
    out = _sealed(tmp_path, script, {"api": "https://api.example.invalid/v1"})
    assert out.splitlines() == ["127.0.0.1 ::1 ", "/proc/net/tcp:1", "/proc/net/tcp6:1", "NO-DNS"], out


def test_an_endpoint_that_cannot_be_relayed_is_one_line_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"^option base_url: 'http://10\.1\.2\.3:8080' is an IP address outside"):
        endpoints_from({"option base_url": "http://10.1.2.3:8080"}, {})


def test_two_sealed_tasks_cannot_talk_over_loopback_or_abstract_sockets(tmp_path: Path) -> None:
    """One seal serves a secret on loopback TCP and on an abstract unix socket (both channels
    carried the treatment's skill to the control arm while the network was shared); a second seal,
    running at the same time, finds neither."""
    serve = (
        "import socket, threading, time\n"
        "t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "t.bind(('127.0.0.1', 18766)); t.listen(4)\n"
        f"u = socket.socket(socket.AF_UNIX); u.bind(b'\\0{MARKER}'); u.listen(4)\n"
        "def loop(s):\n"
        "    while True:\n"
        "        c, _ = s.accept(); c.sendall(b'" + MARKER + "'); c.close()\n"
        "for s in (t, u): threading.Thread(target=loop, args=(s,), daemon=True).start()\n"
        "print('SERVING', flush=True); time.sleep(20)\n"
    )
    fetch = (
        "import socket\n"
        "for family, addr in ((socket.AF_INET, ('127.0.0.1', 18766)), (socket.AF_UNIX, b'\\0" + MARKER + "')):\n"
        "    s = socket.socket(family); s.settimeout(3)\n"
        "    try:\n"
        "        s.connect(addr); print('GOT', s.recv(100))\n"
        "    except OSError as exc:\n"
        "        print('REFUSED', exc)\n"
    )
    roots = [tmp_path / "tmp" / f"knowmeter-task-{i}" for i in range(2)]
    for root in roots:
        (root / "work").mkdir(parents=True)
    seals = [Seal(root) for root in roots]
    server = subprocess.Popen(
        seals[0].argv(["python3", "-c", serve], cwd=roots[0] / "work"), stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "SERVING"
        out = subprocess.run(
            seals[1].argv(["python3", "-c", fetch], cwd=roots[1] / "work"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    finally:
        server.kill()
        server.wait()
    assert MARKER not in out and out.count("REFUSED") == 2, out


def test_an_error_inside_a_sealed_sandbox_comes_out_as_itself(tmp_path: Path) -> None:
    """A retryable API failure is raised from inside the sandbox (``ExecutorError``, for
    knowmeter's retry); the relays' task group must neither swallow it (an await in the cancelled
    group replaced it with a cancellation: the run went on with no result) nor wrap it in a group."""
    from knowmeter.executors import ExecutorError

    (tmp_path / "ws").mkdir()
    request = ExecRequest(task_id="s1::v::r0", sample_id="s1", prompt="", system=None, workspace=tmp_path / "ws")

    async def go() -> None:
        async with task_sandbox(request, tmp_root=tmp_path, sealed=True, api_urls={"api": "http://127.0.0.1:9"}):
            raise ExecutorError("claude: rate limited (429)")

    with pytest.raises(ExecutorError, match=r"rate limited \(429\)"):
        anyio.run(go)


def test_an_api_the_seal_cannot_relay_is_refused_when_the_executor_is_made() -> None:
    """Not at every task: the executor is unavailable, with the setting named in one line."""
    from knowmeter.executors import ExecutorSpec, ExecutorUnavailable, create_executor
    from tests.support.agents import agent_cli

    options = {"bin": str(agent_cli("claude")), "base_url": "http://10.1.2.3:8080", "api_key": "dummy"}
    with pytest.raises(ExecutorUnavailable, match=r"^claude: option base_url: 'http://10\.1\.2\.3:8080' is an IP"):
        create_executor(ExecutorSpec("claude", None, options))


def test_the_relays_interpreter_shows_its_binary_and_stdlib_not_their_folders(tmp_path: Path) -> None:
    """The relay runs on knowmeter's own Python: the seal shows that binary and its prefix's
    ``lib``, not the folders around them (a Python kept in HOME would have shown all of HOME)."""
    import sys

    from knowmeter.executors._seal import SYSTEM_DIRS

    binary, prefix = Path(sys.executable).resolve(), Path(sys.base_prefix).resolve()
    if any(binary.is_relative_to(d) for d in SYSTEM_DIRS):
        pytest.skip("this Python is a system one: its folders are shown anyway")
    out = _sealed(tmp_path, f"ls -A {binary.parent}; echo ---; ls -A {prefix}", {"api": "http://127.0.0.1:9"})
    beside, around = (part.split() for part in out.split("---"))
    holding = {binary.relative_to(prefix).parts[0]} if binary.is_relative_to(prefix) else set()
    assert beside == [binary.name] and set(around) == {"lib", *holding}, out
