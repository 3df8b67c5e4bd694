"""The benches' shared wait for a burst's end: the watch sees it, a list confirms it (bench/support.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench.e2e import BenchError, Stack
from bench.support import all_seen


def test_all_seen_lists_only_once_the_watch_has_seen_everything(tmp_path: Path) -> None:
    seen: dict[str, float] = {}
    lists: list[int] = []

    async def listed() -> bool:
        lists.append(len(seen))
        return True

    async def watch() -> None:
        for i in range(3):
            await asyncio.sleep(0)
            seen[f"o-{i}"] = float(i)
        await asyncio.Event().wait()  # a watch stays open until cancelled

    async def scenario() -> None:
        watcher = asyncio.create_task(watch())
        try:
            await all_seen(Stack(tmp_path, "agent", 30), watcher, seen, 3, listed, 30, "3 objects")
        finally:
            watcher.cancel()

    asyncio.run(scenario())

    assert lists == [3]


def test_all_seen_fails_with_the_watchs_own_error(tmp_path: Path) -> None:
    async def broken() -> None:
        raise ConnectionResetError("the watch's connection was reset")

    async def listed() -> bool:
        raise AssertionError("nothing is listed before the watch has seen every object")

    async def scenario() -> None:
        watcher = asyncio.create_task(broken())
        await all_seen(Stack(tmp_path, "agent", 30), watcher, {}, 3, listed, 30, "3 objects")

    with pytest.raises(ConnectionResetError, match="connection was reset"):
        asyncio.run(scenario())


def test_all_seen_names_what_the_watch_saw_when_time_runs_out(tmp_path: Path) -> None:
    async def listed() -> bool:
        return False

    async def scenario() -> None:
        watcher = asyncio.create_task(asyncio.Event().wait())
        try:
            await all_seen(Stack(tmp_path, "agent", 30), watcher, {"o-0": 0.0}, 1, listed, 0.2, "1 object")
        finally:
            watcher.cancel()

    with pytest.raises(BenchError) as failed:
        asyncio.run(scenario())

    assert "waiting for 1 object" in str(failed.value)
    assert "the watch saw 1 of 1" in failed.value.__notes__
