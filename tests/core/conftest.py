"""Fixtures for the core tests: the demo project and one evaluated report (session-wide); the
tests run ``knowmeter`` through ``tests.support.cli``."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowmeter
from tests.support.cli import init_demo


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="session")
def demo_report(demo: Path) -> dict:  # type: ignore[type-arg]
    """The demo run's report.json content (``knowmeter.evaluate`` returns the typed ``Report``)."""
    return knowmeter.evaluate(demo).to_dict()
