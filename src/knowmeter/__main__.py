"""``python -m knowmeter``."""

from knowmeter.cli import main

main()
