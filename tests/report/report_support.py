"""What the report tests share: the hostile payloads, where screenshots go, a project's latest run."""

from __future__ import annotations

from pathlib import Path

#: Screenshots of the browser tests (kept by CI as artifacts).
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

#: payloads that must show up as text and never run or break the page
HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    '<a href="javascript:window.__pwned = 3">click</a>',
    "</textarea><script>window.__pwned = 4</script>",
    '<svg onload="window.__pwned = 5"><script>window.__pwned = 6</script></svg>',
    "</script><script>window.__pwned = 7</script><!--",
    "{{ 7 * 7 }} {% raw %} ]]> \u2028 &amp; &lt;b&gt;",
]


def latest_run(project: Path) -> Path:
    return sorted((project / ".knowmeter" / "runs").iterdir())[-1]
