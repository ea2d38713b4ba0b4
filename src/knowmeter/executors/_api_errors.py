"""Naming the model-API failures an agent CLI runs into (429, 5xx/529, 401/403, model not found).

A CLI retries API errors itself (claude reports each retry as a ``system``/``api_retry`` event;
codex says ``exceeded retry limit, last status: 429`` or ``unexpected status 401``). What it
ends with — an error result, a failed turn, or knowmeter's timeout while it is still retrying —
becomes one ``ApiFailure`` here: the status, what it means, how often the CLI retried, and whether
knowmeter's own retry policy should try the task again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RETRYABLE_STATUS", "ApiFailure", "api_failure", "claude_api_retries", "status_in_text"]

#: Statuses worth trying again later (rate limits, overload, server faults, request timeouts).
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MEANING = {
    400: "bad request",
    401: "authentication failed",
    403: "permission denied",
    404: "model not found",
    408: "request timed out",
    409: "conflict",
    413: "request too large",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}
_ADVICE = {
    401: "check the API key the agent is given",
    403: "the API key may not use this model or endpoint",
    404: "check the model name (--model) and the endpoint",
}
#: ``last status: 429``, ``unexpected status 401 Unauthorized``, ``status code 529``, ``API Error: 500``.
_STATUS_TEXT = re.compile(r"(?:status(?: code)?[: ]+|API Error:?\s+(?:\w+\s+)*?\(?)([45]\d\d)\b", re.I)


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """A model-API failure that ended (or was ending) an agent run."""

    status: int
    #: how many times the CLI retried before it gave up or was stopped (None: not reported)
    retries: int | None = None
    detail: str = ""

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE_STATUS

    def message(self, cli: str) -> str:
        """One line: ``claude: rate limited (429) after 3 retries: slow down``."""
        text = f"{cli}: {_MEANING.get(self.status, 'API error')} ({self.status})"
        if self.retries:
            text += f" after {self.retries} {'retry' if self.retries == 1 else 'retries'} by the CLI"
        if advice := _ADVICE.get(self.status):
            text += f"; {advice}"
        detail = " ".join(self.detail.split())[:300]
        return f"{text}: {detail}" if detail else text


def status_in_text(text: str) -> int | None:
    """The HTTP status a CLI's error text names, if any."""
    match = _STATUS_TEXT.search(text)
    return int(match.group(1)) if match else None


def claude_api_retries(records: Iterable[str | Mapping[str, Any]]) -> tuple[int, int | None, str]:
    """Claude stream-json ``api_retry`` events (lines, or the SDK's message dicts): how many, the
    last status, the last error word."""
    count, status, error = 0, None, ""
    for record in records:
        if isinstance(record, str):
            if '"api_retry"' not in record:
                continue
            try:
                event = json.loads(record)
            except ValueError:
                continue
        else:
            event = record
        if isinstance(event, Mapping) and event.get("subtype") == "api_retry":
            count += 1
            raw = event.get("error_status")
            status = raw if isinstance(raw, int) else status
            error = str(event.get("error") or error)
    return count, status, error


def api_failure(status: int | None, *, retries: int | None = None, detail: str = "") -> ApiFailure | None:
    """An ``ApiFailure`` for an HTTP error status (None for none or a non-error status)."""
    if status is None or not 400 <= status <= 599:
        return None
    return ApiFailure(status, retries, detail)
