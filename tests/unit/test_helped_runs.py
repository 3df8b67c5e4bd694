"""What a task keeps of the keys it helped run (``help_here``): every run counted, the failures named
up to a bound, so a poll of 10,000 failing objects does not carry 10,000 errors."""

from __future__ import annotations

from syncflow.queue.execute import RunReport
from syncflow.tasks import FAILURES_NAMED, HelpedRuns


def test_failed_runs_are_named_up_to_the_bound_and_every_run_is_counted() -> None:
    helped = HelpedRuns()
    helped.add(RunReport("ok", "done", key="sync/r/c/ns/fine"))
    for i in range(FAILURES_NAMED + 5):
        helped.add(RunReport("error", "backoff", ValueError(f"bad {i}"), key=f"sync/r/c/ns/o-{i}"))

    assert (helped.count, helped.failures) == (FAILURES_NAMED + 6, FAILURES_NAMED + 5)
    assert len(helped.failed) == FAILURES_NAMED
    assert helped.failed[0][0] == "sync/r/c/ns/o-0"
    assert str(helped.failed[-1][1]) == f"bad {FAILURES_NAMED - 1}"
