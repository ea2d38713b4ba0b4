"""Test support code shared by several test folders (importable as ``support`` under pytest)."""
