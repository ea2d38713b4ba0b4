"""``truth_sources`` entries: ``path``, ``path:N``, ``path:N-M`` or ``path#anchor`` (the grammar
of Skill Graph's lint, ``FORMATS.md`` §2.1), parsed and resolved against the skill's repository."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from knowmeter.skillgraph._markdown import Section, parse_sections, split_frontmatter

TRUTH_SOURCE = re.compile(r"^([^:#]+)(?:(?::(\d+)(?:-(\d+))?)|(?:#([a-z0-9][a-z0-9-]*)))?$")
TRUTH_SOURCE_FORMS = "path, path:N, path:N-M or path#anchor (anchor: lower-case letters, digits, '-')"


@dataclass(frozen=True, slots=True)
class TruthSource:
    """One parsed ``truth_sources`` entry; ``raw`` is the string as written."""

    raw: str
    path: str
    start: int | None = None
    end: int | None = None
    anchor: str | None = None

    @classmethod
    def parse(cls, raw: str) -> TruthSource | None:
        """The parsed entry, or ``None`` when ``raw`` does not follow the grammar."""
        m = TRUTH_SOURCE.match(raw.strip())
        if m is None:
            return None
        path, start, end, anchor = m.groups()
        first = int(start) if start is not None else None
        last = int(end) if end is not None else first
        return cls(raw, path.strip(), first, last, anchor)


@dataclass(frozen=True, slots=True)
class ResolvedTruthSource:
    """A truth source looked up on disk. ``problem`` is ``None`` when it resolves; otherwise one
    sentence (missing file, range past the end, missing anchor, bad range). ``text`` is the cited
    lines (the whole file, the range, or the anchored section) when it resolves."""

    source: TruthSource
    file: Path
    problem: str | None
    line_count: int | None = None
    start: int | None = None
    end: int | None = None
    text: str | None = None


def resolve_truth_source(source: TruthSource, repo_root: Path) -> ResolvedTruthSource:
    """Resolve ``source`` against ``repo_root`` (the folder its paths are relative to)."""
    file = repo_root / source.path
    if not file.is_file():
        return ResolvedTruthSource(source, file, f"cited file {source.path} does not exist under {repo_root}")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ResolvedTruthSource(source, file, f"cited file {source.path} cannot be read ({exc})")
    lines = text.splitlines()
    count = len(lines)
    if source.anchor is not None:
        section = _find_anchor(text, file, source.anchor)
        if section is None:
            return ResolvedTruthSource(
                source, file, f"no heading in {source.path} has the anchor #{source.anchor}", count
            )
        return ResolvedTruthSource(
            source,
            file,
            None,
            count,
            section.line,
            section.end_line,
            "\n".join(lines[section.line - 1 : section.end_line]),
        )
    if source.start is None:
        return ResolvedTruthSource(source, file, None, count, 1, count, text)
    end = source.end if source.end is not None else source.start
    if source.start < 1 or end < source.start:
        return ResolvedTruthSource(
            source, file, f"line range {source.start}-{end} is empty or starts before line 1", count
        )
    if end > count:
        return ResolvedTruthSource(
            source, file, f"line range {source.start}-{end} runs past the end of {source.path} ({count} lines)", count
        )
    return ResolvedTruthSource(source, file, None, count, source.start, end, "\n".join(lines[source.start - 1 : end]))


def _find_anchor(text: str, file: Path, anchor: str) -> Section | None:
    """The heading answering to ``anchor`` in a Markdown file (frontmatter skipped if any)."""
    body, first = text, 1
    if text.startswith("---"):
        try:
            split = split_frontmatter(text, file)
            body, first = split.body, split.body_line
        except ValueError:
            pass
    return next((s for s in parse_sections(body, first) if anchor in s.anchors), None)
