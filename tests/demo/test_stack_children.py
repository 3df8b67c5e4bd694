"""A process that starts children with ``Stack`` (the all-in-one agent, the demo) takes them with it
when it is SIGKILLed: nothing keeps running re-parented (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's"),
]

PARENT = """
import sys, threading, time
from pathlib import Path
from syncflow.runtime.stack import Stack

threading.Thread(target=time.sleep, args=(600,), daemon=True).start()  # like the metrics server
stack = Stack(Path(sys.argv[1]))
for name in ("first", "second"):
    stack.start(name, ["sleep", "600"])
Path(sys.argv[1], "started").write_text("")
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_children_stop_when_their_parent_is_sigkilled(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)])
    try:
        wait_for(lambda: (tmp_path / "started").exists() or parent.poll() is not None, 30, "the children")
        assert parent.poll() is None, "the parent exited before starting its children"
        children = [int(line.split()[1]) for line in (tmp_path / "pids").read_text().splitlines()]
        assert len(children) == 2 and all(_alive(pid) for pid in children)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        wait_for(lambda: not any(_alive(pid) for pid in children), 10, "the children to stop")
    finally:
        parent.kill()
        for pid in (int(line.split()[1]) for line in _lines(tmp_path / "pids")):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
