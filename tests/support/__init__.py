"""Test support code shared by several test folders (``tests.support.…``)."""
