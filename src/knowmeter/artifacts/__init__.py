"""Variants and their artifacts (files, directory skills, git revisions, baseline)."""

from knowmeter.artifacts._copies import copies_in
from knowmeter.artifacts._variant import (
    BASELINE,
    Artifact,
    Role,
    Variant,
    artifact_from_dir,
    artifact_from_file,
    available_variants,
    hash_files,
    resolve_variant,
)

__all__ = [
    "BASELINE",
    "Artifact",
    "Role",
    "Variant",
    "artifact_from_dir",
    "artifact_from_file",
    "available_variants",
    "copies_in",
    "hash_files",
    "resolve_variant",
]
