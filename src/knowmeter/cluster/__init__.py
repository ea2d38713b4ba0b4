"""Running work on a Ray cluster (``--backend ray``): connecting, and the worker-side entry points.

Ray is an optional dependency (``pip install 'knowmeter[ray]'``), imported only here and only
when a Ray backend is asked for."""

from knowmeter.cluster._connect import BACKENDS, cluster_cpus, connect

__all__ = ["BACKENDS", "cluster_cpus", "connect"]
