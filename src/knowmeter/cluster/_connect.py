"""Connecting this process (the driver) to Ray: the cluster at ``--ray-address`` or
``RAY_ADDRESS``, else a local Ray instance started for this process and bound to loopback only."""

from __future__ import annotations

import os
import sys
from typing import Any

from knowmeter.errors import InputError

#: The places tasks can run: this process (and its worker processes), or a Ray cluster.
BACKENDS = ("local", "ray")

#: Ray's switch for the multi-node address detection, read when ray is imported; off, a local
#: instance (and its workers, which inherit the environment) binds to 127.0.0.1.
_LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _ray() -> Any:
    try:
        import ray
    except ModuleNotFoundError:
        raise InputError("--backend ray needs Ray: pip install 'knowmeter[ray]'") from None
    return ray


def _on_loopback(address: str) -> bool:
    host = address.removeprefix("ray://").rpartition(":")[0] or address
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


def connect(address: str | None = None, *, num_cpus: int | None = None) -> Any:
    """Connect to Ray once per process and return the ``ray`` module. ``address`` (else
    ``RAY_ADDRESS``) names an existing cluster (``HOST:PORT`` or ``ray://HOST:PORT``); without
    either a local instance is started with ``num_cpus`` CPUs (default: every core), no
    dashboard, listening on loopback only, and stopped when this process exits."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    if (address is None or _on_loopback(address)) and "ray" not in sys.modules:
        # read when ray is imported: the node's address is then 127.0.0.1 (else Ray swaps a loopback
        # address for the machine's network address, where a loopback-only instance is not found)
        os.environ[_LOOPBACK_SWITCH] = "0"
    ray = _ray()
    if ray.is_initialized():
        return ray
    quiet: dict[str, Any] = {"log_to_driver": False, "configure_logging": True, "logging_level": "warning"}
    try:
        if address is None:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or "a local instance"
        first = (str(exc).splitlines() or [""])[0]
        raise InputError(
            f"Ray: cannot connect to {where}: {first}; check --ray-address / RAY_ADDRESS "
            "(e.g. 127.0.0.1:6379) and that the cluster runs Ray "
            f"{ray.__version__}"
        ) from None
    return ray


def cluster_cpus(ray: Any) -> int:
    """The CPUs the connected cluster offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
