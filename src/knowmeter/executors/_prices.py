"""List prices of model APIs, for the cost of ``openai`` / ``anthropic`` executor runs.

A small, dated table: a model that is not in it has an unknown cost (None), never a guessed one.
Prices are USD per million tokens, the providers' public list prices (standard tier, no batch
discount) as of ``PRICES_AS_OF``. A dated model id (``claude-sonnet-4-5-20250929``,
``gpt-4o-2024-08-06``) is priced as its undated name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowmeter.traces import Usage

__all__ = ["PRICES", "PRICES_AS_OF", "Price", "cost_usd", "price_for"]

PRICES_AS_OF = "2025-11-01"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens: input, output, cache read, cache write (Anthropic only)."""

    input: float
    output: float
    cache_read: float
    cache_write: float | None = None


_OPUS_4 = Price(15.0, 75.0, 1.50, 18.75)
_SONNET = Price(3.0, 15.0, 0.30, 3.75)

PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4-5": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4-0": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.0, 0.08, 1.0),
    # OpenAI
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o3": Price(2.0, 8.0, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
}

_DATE_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def price_for(model: str | None) -> Price | None:
    """The price of ``model`` (its dated or ``-latest`` form included), or None if not listed."""
    if not model:
        return None
    return PRICES.get(model) or PRICES.get(_DATE_SUFFIX.sub("", model))


def cost_usd(model: str | None, usage: Usage) -> float | None:
    """The list-price cost of one call, or None when the model or the token counts are unknown.

    ``usage`` has ``USAGE_KEYS``' meaning for every provider: ``input_tokens`` exclude cache reads
    and writes, which are priced apart.
    """
    price = price_for(model)
    fresh, output = usage.get("input_tokens"), usage.get("output_tokens")
    if price is None or fresh is None or output is None:
        return None
    cached = usage.get("cache_read_tokens") or 0
    written = usage.get("cache_creation_tokens") or 0
    total = (
        fresh * price.input
        + cached * price.cache_read
        + output * price.output
        + written * (price.cache_write if price.cache_write is not None else price.input)
    )
    return total / 1_000_000
