"""knowmeter's test suite: a package, so test helpers are imported as ``tests.support…`` and
``tests.<area>.<helpers>`` (pytest puts the repository root on ``sys.path`` for it)."""
