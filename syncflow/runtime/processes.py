"""Starts the long-running processes: a Celery worker, Celery beat or a mode's watch process."""

from __future__ import annotations

from collections.abc import Sequence

from syncflow.config import Settings
from syncflow.queue.beat import bounded_scheduler
from syncflow.runtime import heap
from syncflow.sync.process import WatchProcess
from syncflow.tasks import app, bind, runtime


def run_worker(
    settings: Settings,
    *,
    queues: Sequence[str],
    concurrency: int,
    include: Sequence[str] = (),
    loglevel: str = "INFO",
    hostname: str | None = None,
) -> None:
    """Run a prefork Celery worker consuming ``queues`` (blocks until shutdown)."""
    from syncflow.runtime import worker_health

    bind(settings)
    worker_health.observe(settings)
    heap.connect()
    argv = ["worker", f"--loglevel={loglevel}", f"--concurrency={concurrency}", "--pool=prefork", "-E"]
    # No gossip: syncflow needs no worker-to-worker events, and Celery's gossip step fails with an
    # AttributeError on every reconnection after the broker went away.
    argv.append("--without-gossip")
    argv += ["--queues", ",".join(queues)]
    if include:
        argv += ["--include", ",".join(include)]
    if hostname:
        argv += ["--hostname", hostname]
    heap.freeze_startup()  # before the pool forks: its processes inherit the frozen objects
    app.worker_main(argv)


def run_watch(process: WatchProcess) -> None:
    """Run a mode's watch process (blocks until SIGINT/SIGTERM), its startup objects frozen first:
    each watch event decodes an object, so the collections it sets off stay short."""
    heap.freeze_startup()
    process.run()


def run_beat(settings: Settings, *, schedule: str, loglevel: str = "INFO") -> None:
    """Run Celery beat with syncflow's schedule (blocks until shutdown)."""
    from syncflow.metrics import exposition

    bind(settings)
    exposition.serve(settings, "beat")
    scheduler = bounded_scheduler(lambda: runtime.service.broker)
    app.Beat(schedule=schedule, loglevel=loglevel, max_interval=5, scheduler=scheduler).run()
