"""Running a batch of coroutines concurrently, with an optional cap, keeping their order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio

T = TypeVar("T")


async def gather(thunks: Sequence[Callable[[], Awaitable[T]]], limit: int | None = None) -> list[T]:
    """Run the thunks concurrently (at most ``limit`` at once); results in input order."""
    if len(thunks) <= 1:  # nothing to overlap: skip the task group (it costs more than the work)
        return [await thunk() for thunk in thunks]
    results: dict[int, T] = {}
    limiter = anyio.CapacityLimiter(limit) if limit else None

    async def one(i: int) -> None:
        if limiter is None:
            results[i] = await thunks[i]()
            return
        async with limiter:
            results[i] = await thunks[i]()

    async with anyio.create_task_group() as tg:
        for i in range(len(thunks)):
            tg.start_soon(one, i)
    return [results[i] for i in range(len(thunks))]
