"""A sealed agent's network: its own network namespace, where only its model API is reachable.

With the host's network shared, two sealed tasks could still talk: one arm serving its skill on
loopback TCP or an abstract unix socket, the other fetching it (measured with the real claude CLI,
``tests/agents/test_agents_escapes.py``). So every seal has a network namespace of its own
(``--unshare-net``: only its own loopback), and each endpoint the agent needs (its API, a proxy)
is relayed:

- inside the seal, a small relay (``RELAY``, run by this Python's interpreter before the agent
  starts) listens on the endpoint's loopback address and port — a host name is mapped to
  127.0.0.1 in the seal's ``/etc/hosts`` — and passes each connection to a unix socket;
- outside, ``serve_endpoints`` accepts on that unix socket and connects to the real host and port.

TLS goes through untouched (the agent still talks to ``api.anthropic.com``, by name). An endpoint
given as a non-loopback IP address cannot be relayed this way and is refused in one line.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketStream

__all__ = ["RELAY", "Endpoint", "endpoints_from", "hosts_file", "interpreter_folders", "relay_argv", "serve_endpoints"]

#: Variables that name where an agent connects (its API, a proxy): each one set in the agent's
#: environment is an endpoint too.
URL_VARS = (
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
)
_DEFAULT_PORTS = {"http": 80, "https": 443}

#: The relay run inside the seal: ``python -I -S -c RELAY ADDR PORT SOCKET ... -- COMMAND``. It
#: listens on each ADDR:PORT, passes every connection to SOCKET, runs COMMAND and exits with its
#: status (128 + N when signal N ended it). Its sockets are not inherited by COMMAND. Only
#: builtin-light modules (``_thread``, ``posix_spawn``): it starts before every sealed agent.
RELAY = r"""
import _thread, os, socket, sys
sep = sys.argv.index("--")
spec, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
def pump(src, dst, done=None):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    if done is not None:
        done.release()
def handle(conn, path):
    up = socket.socket(socket.AF_UNIX)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        return
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(pump, (up, conn, done))
    pump(conn, up)
    done.acquire()
    conn.close()
    up.close()
def serve(lsock, path):
    while True:
        conn, _ = lsock.accept()
        _thread.start_new_thread(handle, (conn, path))
for i in range(0, len(spec), 3):
    addr, port, path = spec[i], int(spec[i + 1]), spec[i + 2]
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    lsock = socket.socket(family)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        lsock.bind((addr, port))
    except OSError as exc:
        if family == socket.AF_INET6:
            continue
        sys.exit(f"knowmeter relay: cannot listen on {addr}:{port}: {exc}")
    lsock.listen(64)
    _thread.start_new_thread(serve, (lsock, path))
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
os._exit(128 - code if code < 0 else code)
"""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A host and port the sealed agent may reach (its model API, a proxy)."""

    host: str
    port: int

    @property
    def is_name(self) -> bool:
        """Whether ``host`` is a name (mapped to loopback in the seal) rather than an address."""
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return True
        return False

    def listen_addresses(self) -> list[str]:
        """Where the relay listens in the seal: the loopback address itself, or 127.0.0.1 and ::1
        for a name (the seal's ``/etc/hosts`` maps it there)."""
        return ["127.0.0.1", "::1"] if self.is_name else [self.host]


def _endpoint(url: str, origin: str) -> Endpoint:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        raise ValueError(f"{origin}: {url!r} names no host")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 443)
    except ValueError as exc:
        raise ValueError(f"{origin}: {url!r}: {exc}") from None
    endpoint = Endpoint(parts.hostname, port)
    if not endpoint.is_name and not ipaddress.ip_address(endpoint.host).is_loopback:
        raise ValueError(
            f"{origin}: {url!r} is an IP address outside this machine, which a sealed agent's network "
            "cannot relay; give it by host name (a line in this machine's /etc/hosts will do)"
        )
    return endpoint


def endpoints_from(urls: Mapping[str, str], env: Mapping[str, str]) -> tuple[Endpoint, ...]:
    """The endpoints for ``urls`` (what each URL is, → URL) and for the ``URL_VARS`` set in ``env``.
    Raises ValueError (one line, naming the setting) for a URL that cannot be relayed."""
    found = [_endpoint(url, origin) for origin, url in urls.items() if url]
    found += [_endpoint(env[var], var) for var in URL_VARS if env.get(var)]
    return tuple(dict.fromkeys(found))


def hosts_file(endpoints: Iterable[Endpoint]) -> str | None:
    """The seal's ``/etc/hosts``: every named endpoint on loopback (None when none is a name)."""
    names = sorted({e.host for e in endpoints if e.is_name} - {"localhost"})
    if not names:
        return None
    return f"127.0.0.1 localhost {' '.join(names)}\n::1 localhost ip6-localhost {' '.join(names)}\n"


def interpreter_folders() -> list[Path]:
    """What the relay's interpreter needs inside the seal: its binary and its prefix's ``lib``
    (the standard library) — not the folders around them, which may be HOME."""
    return [Path(sys.executable).resolve(), Path(sys.base_prefix).resolve() / "lib"]


def relay_argv(endpoints: Sequence[Endpoint], socket_dir: Path) -> list[str]:
    """The command prefix that starts the relay for ``endpoints`` (then ``--`` and the agent)."""
    listen: dict[tuple[str, int], Path] = {}  # a name and its address on one port: the first wins
    for i, e in enumerate(endpoints):
        for addr in e.listen_addresses():
            listen.setdefault((addr, e.port), socket_dir / f"{i}.sock")
    spec = [arg for (addr, port), path in listen.items() for arg in (addr, str(port), str(path))]
    return [str(Path(sys.executable).resolve()), "-I", "-S", "-c", RELAY, *spec, "--"]


async def _forward(client: SocketStream, endpoint: Endpoint) -> None:
    async with client:
        try:
            upstream = await anyio.connect_tcp(endpoint.host, endpoint.port)
        except OSError:
            return
        async with upstream, anyio.create_task_group() as tg:

            async def pump(src: SocketStream, dst: SocketStream) -> None:
                try:
                    async for chunk in src:
                        await dst.send(chunk)
                    await dst.send_eof()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    tg.cancel_scope.cancel()

            tg.start_soon(pump, client, upstream)
            tg.start_soon(pump, upstream, client)


@asynccontextmanager
async def serve_endpoints(socket_dir: Path, endpoints: Sequence[Endpoint]) -> AsyncIterator[None]:
    """Accept on ``socket_dir/<i>.sock`` for the i-th endpoint and connect each connection to the
    endpoint itself, while the block runs."""
    listeners = [await anyio.create_unix_listener(socket_dir / f"{i}.sock") for i in range(len(endpoints))]
    try:
        async with anyio.create_task_group() as tg:
            for listener, endpoint in zip(listeners, endpoints, strict=True):

                async def handler(client: SocketStream, endpoint: Endpoint = endpoint) -> None:
                    await _forward(client, endpoint)

                tg.start_soon(listener.serve, handler)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # the block's own error (the relays raise none), as it was
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:  # after the group: an await in its cancelled scope would replace the block's error
        with anyio.CancelScope(shield=True):
            for listener in listeners:
                await listener.aclose()
