"""The searches both viewer benchmarks time (``bench_viewer.py`` over HTTP, ``bench_html.py`` on the
index in-process), as the page's script sends them: (what is asked, the URL query)."""

from __future__ import annotations

SEARCHES = (
    ("a word in every row", "q=refund"),
    ("one sample's prompt", "q=question+1234%3A"),
    ("no match", "q=zzzz-no-such-text"),
    ("failed + word", "q=the&status=fail"),
    ("variants disagree", "status=disagree"),
    ("score range", "min=4&max=5"),
    ("sort by Δ", "sort=delta&dir=desc"),
    ("word + sort by id", "q=refund&sort=id"),
)
