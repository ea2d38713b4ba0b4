"""Issue 27 point 5: the budget's ledger (budget.jsonl). A call is written down before it starts and
when it ends; a resumed run charges the calls a killed leg left in flight, once, even when the
leg that charged them was killed too; a line cut short by a kill is skipped and said."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

from knowmeter.runner import HEADROOM, LEDGER_FILE, Budget, Ledger, StoredSpend, budget_warnings, read_ledger
from knowmeter.store import BudgetStatus


def _ledger(run: Path, *lines: dict[str, object]) -> None:
    with (run / LEDGER_FILE).open("a") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in lines)


def test_a_settlement_closes_the_oldest_open_reservation_of_its_key(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.reserve("t1", "agent", 0.075)
    ledger.settle("t1", 0.05)
    ledger.reserve("t1", "agent", 0.09)  # the same task again, in a later leg
    ledger.reserve("judge:t1:1", "judge", 0.0)
    ledger.settle("judge:t1:1", None)
    ledger.reserve("t2", "agent", 0.075)
    ledger.settle("t2", 0.06)
    ledger.close()
    state = read_ledger(tmp_path)
    agent = state.settled["agent"]
    assert (agent.known, agent.unknown, agent.max_usd) == (2, 0, 0.06) and agent.spent_usd == pytest.approx(0.11)
    assert state.settled["judge"] == StoredSpend(known=0, unknown=1, spent_usd=0.0, max_usd=None)
    assert set(state.settled) == {"agent", "judge"}
    assert [(c.key, c.kind, c.usd) for c in state.open] == [("t1", "agent", 0.09)]
    assert state.problems == [] and state.charged == []


def test_a_line_cut_short_by_a_kill_is_skipped_said_and_the_next_line_is_whole(tmp_path: Path) -> None:
    _ledger(tmp_path, {"reserve": "t1", "kind": "agent", "usd": 0.075}, {"settle": "t1", "usd": 0.05})
    with (tmp_path / LEDGER_FILE).open("a") as fh:
        fh.write('{"reserve": "t2", "kind": "ag')  # the driver died mid-write
    state = read_ledger(tmp_path)
    assert state.problems == [f"{LEDGER_FILE} line 3 is damaged (cut short when a leg was killed?)"]
    assert state.settled["agent"].known == 1 and state.open == []

    ledger = Ledger(tmp_path)  # the next leg appends after it
    ledger.reserve("t3", "agent", 0.075)
    ledger.close()
    state = read_ledger(tmp_path)
    assert [c.key for c in state.open] == ["t3"]
    assert len(state.problems) == 1


@pytest.mark.parametrize(
    "line",
    ['{"settle": "t1", "usd": NaN}', '{"settle": "t1", "usd": -1}', "[1, 2]", '{"reserve": "t1", "usd": 0.1}'],
)
def test_a_line_that_is_no_ledger_line_is_skipped_and_said(tmp_path: Path, line: str) -> None:
    _ledger(tmp_path, {"reserve": "t1", "kind": "agent", "usd": 0.075})
    with (tmp_path / LEDGER_FILE).open("a") as fh:
        fh.write(line + "\n")
    state = read_ledger(tmp_path)
    assert [c.key for c in state.open] == ["t1"] and state.problems == [
        f"{LEDGER_FILE} line 2 is damaged (cut short when a leg was killed?)"
    ]


def test_a_reservation_is_written_before_the_call_and_a_refused_call_writes_nothing(tmp_path: Path) -> None:
    budget = Budget(total_usd=0.1, per_task_usd=0.06, ledger=Ledger(tmp_path))
    reserved = budget.try_reserve(key="t1")
    assert reserved == 0.06
    assert [c.key for c in read_ledger(tmp_path).open] == ["t1"]  # on disk while the call runs
    assert budget.try_reserve(key="t2") is None
    budget.settle(reserved, 0.05, key="t1")
    state = read_ledger(tmp_path)
    assert state.open == [] and state.settled["agent"] == StoredSpend(1, 0, 0.05, 0.05)


def test_calls_in_flight_are_charged_once_across_resumes_and_kills(tmp_path: Path) -> None:
    _ledger(
        tmp_path,
        {"reserve": "t1", "kind": "agent", "usd": 0.0},
        {"settle": "t1", "usd": 0.04},
        {"reserve": "hedging:t1:1", "kind": "hedging", "usd": 0.0},
        {"settle": "hedging:t1:1", "usd": 0.02},  # stored nowhere but here
        {"reserve": "t2", "kind": "agent", "usd": 0.06},  # in flight: charged its reservation
        {"reserve": "hedging:t1:2", "kind": "hedging", "usd": 0.0},  # HEADROOM × $0.02
        {"reserve": "judge:t1:1", "kind": "judge", "usd": 0.0},  # no judge cost known: unknown
    )
    stored = {"agent": StoredSpend(known=1, spent_usd=0.04)}  # results.jsonl holds t1
    first = Budget(total_usd=1.0)
    first.continue_after_kill(stored, tmp_path)
    charged = 0.06 + HEADROOM * 0.02
    assert (first.in_flight_calls, first.in_flight_unknown) == (3, 1)
    assert first.in_flight_usd == pytest.approx(charged)
    assert first.spent_usd == pytest.approx(0.06)  # t1 and the first hedging call, each counted once
    assert first.charged_usd == pytest.approx(0.06 + charged)
    assert read_ledger(tmp_path).open == []  # the charges are written down
    record = first.to_dict()
    assert (
        f"3 call(s) were in flight when a leg was killed: charged at their reservation ${charged:.6f}; "
        "their real cost is unknown (1 of them had no reservation and no cost of their kind was known: "
        "counted as unknown, not charged)"
    ) in str(record["note"])
    assert any("3 call(s) in flight when a leg was killed were charged" in w for w in budget_warnings(record))

    recorded = Budget(total_usd=1.0)  # the leg that charged them recorded its budget: not again
    recorded.continue_from(BudgetStatus.model_validate(record))
    recorded.continue_after_kill(stored, tmp_path)
    assert recorded.in_flight_calls == 3 and recorded.in_flight_usd == pytest.approx(charged)
    assert recorded.charged_usd == pytest.approx(first.charged_usd)

    killed = Budget(total_usd=1.0)  # that leg was killed before it recorded: its charges still count
    killed.continue_after_kill(stored, tmp_path)
    assert (killed.in_flight_calls, killed.in_flight_unknown) == (3, 1)
    assert killed.charged_usd == pytest.approx(first.charged_usd)


def _recorded(calls: dict[str, object], spent_usd: float, **more: object) -> BudgetStatus:
    """A budget record of an earlier leg (run.json's ``budget``) that spent ``spent_usd``."""
    return BudgetStatus.model_validate(
        {
            "total_usd": None,
            "per_task_usd": None,
            "spent_known_usd": spent_usd,
            "tasks_with_known_cost": 0,
            "tasks_with_unknown_cost": 0,
            "tasks_not_started_for_budget": 0,
            "calls": calls,
            "overshoot_usd": None,
            "note": None,
            **more,
        }
    )


def test_calls_in_flight_count_against_the_total() -> None:
    agent = {"known_cost": 1, "unknown_cost": 0, "spent_known_usd": 0.02, "max_cost_usd": 0.04}
    for charged, fits in ((0.0, True), (0.15, False)):  # $0.02 spent + $0.06 reserved (+ $0.15) vs $0.20
        budget = Budget(total_usd=0.2)
        budget.continue_from(_recorded({"agent": agent}, 0.02, in_flight_calls=2, in_flight_charged_usd=charged))
        assert (budget.try_reserve(key="t9") is not None) is fits


def test_calls_reserved_together_wait_for_one_fsync_that_covers_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call starts only once its reservation is on disk; the fsync runs off the event loop and
    one serves every call waiting at the time (8 calls reserved at once: not 8 fsyncs)."""
    synced: list[int] = []  # lines on disk after each fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        time.sleep(0.02)  # a slow disk
        lines = len((tmp_path / LEDGER_FILE).read_bytes().splitlines())
        real_fsync(fd)
        synced.append(lines)

    monkeypatch.setattr("knowmeter.runner._ledger.os.fsync", fsync)
    budget = Budget(total_usd=1.0, per_task_usd=0.01, ledger=Ledger(tmp_path))
    known = {"known_cost": 1, "unknown_cost": 0, "spent_known_usd": 0.01, "max_cost_usd": 0.01}
    budget.continue_from(_recorded({"agent": known}, 0.01))  # not learning: 8 at once
    started: list[tuple[int, int]] = []  # (the call's line, lines on disk when it started)

    async def call(i: int) -> None:
        assert await budget.reserve("agent", f"t{i}") == 0.01
        line = next(n for n, c in enumerate(read_ledger(tmp_path).open, 1) if c.key == f"t{i}")
        started.append((line, max(synced, default=0)))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(call, i)

    anyio.run(main)
    assert len(started) == 8 and all(line <= on_disk for line, on_disk in started)
    assert 1 <= len(synced) < 8
