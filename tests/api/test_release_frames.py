"""``release_frames`` drops the locals a kept error's traceback holds, and never ends a generator or coroutine
whose frame is in that traceback: an error a cache keeps is also raised to its readers (an asyncio task among
them), so the task's suspended coroutine frame can be in the traceback when the cache's thread releases it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

from restmapper.errors import release_frames


def test_a_suspended_generator_in_the_traceback_goes_on() -> None:
    shared = ValueError("kept")

    def steps() -> Iterator[int]:
        try:
            raise shared
        except ValueError:
            pass
        yield 1
        yield 2

    it = steps()
    assert next(it) == 1
    release_frames(shared)
    assert next(it) == 2


def test_a_coroutine_that_raised_the_kept_error_resumes_after_another_thread_releases_it() -> None:
    shared = RuntimeError("kept by a cache, raised to a reader")

    async def reader() -> str:
        try:
            raise shared
        except RuntimeError:
            pass
        suspended = threading.Event()
        asyncio.get_running_loop().call_soon(suspended.set)  # runs once the reader waits below

        def cache_thread() -> None:
            assert suspended.wait(10)
            release_frames(shared)

        await asyncio.to_thread(cache_thread)
        return "resumed"

    assert asyncio.run(reader()) == "resumed"


def test_the_locals_of_finished_frames_are_dropped() -> None:
    def fail() -> None:
        body = bytearray(1024)  # noqa: F841 - held by the frame until released
        raise ValueError("boom")

    try:
        fail()
    except ValueError as exc:
        caught = exc
    tb = caught.__traceback__
    assert tb is not None and tb.tb_next is not None
    assert "body" in tb.tb_next.tb_frame.f_locals
    release_frames(caught)
    assert "body" not in tb.tb_next.tb_frame.f_locals
