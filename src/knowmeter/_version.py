"""knowmeter's version, written once: pyproject.toml reads it, ``knowmeter.__version__`` re-exports it
and every run records it (a module of its own, so the run's provenance does not import the façade)."""

__version__ = "0.2.0.dev0"
