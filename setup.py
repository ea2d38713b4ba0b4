"""The native spawner (``knowmeter.executors._native_spawn``, issue 32): built at install when the
machine has a C compiler, skipped otherwise (``optional``: knowmeter then spawns from Python). All
other metadata is in pyproject.toml."""

import sys

from setuptools import Extension, setup

native = Extension(
    "knowmeter.executors._native_spawn",
    sources=["src/knowmeter/executors/_native_spawn.c"],
    extra_compile_args=["-O2", "-pthread"],
    extra_link_args=["-pthread"],
    optional=True,
)

setup(ext_modules=[native] if sys.platform.startswith("linux") else [])
