"""Every mode's benchmark beside its fair baseline, in one table (``python -m bench --mode all``).

Each selected mode runs on its own fresh stack (devclusters, a private ``redis-server``, syncflow's
processes), one after another: syncflow syncs ``--objects`` objects in a burst, then ``--steady`` more
created at half the burst's objects/s (create → copy latency; workload: status back upstream too; edge:
the lag of downstream changes to the mailbox), then the mode's fair baseline does the burst's writes
from this process. One table follows (``--json``: the same figures as JSON), with the load average
before and after each mode and what each baseline does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench import clusters, e2e, edge, workload
from bench.e2e import BenchError
from bench.figures import ModeFigures, RunOptions, as_json, loaded, table
from bench.support import private_redis

Measure = Callable[[RunOptions, str], Awaitable[ModeFigures]]
MODES: dict[str, Measure] = {
    "publish": e2e.measure,
    "workload": workload.measure,
    "clusters": clusters.measure,
    "edge": edge.measure,
}
"""Each mode's ``measure(options, redis_url)``, in the order ``all`` runs them."""


async def measured(mode: str, options: RunOptions) -> ModeFigures:
    """One mode's figures on a fresh stack and Redis, with the load averages before and after."""
    before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch, private_redis(Path(scratch)) as url:
        figures = await MODES[mode](options, url)
    return loaded(figures, before)


async def run(args: argparse.Namespace) -> list[ModeFigures]:
    """Measure each selected mode."""
    modes = list(MODES) if args.mode == "all" else [args.mode]
    options = RunOptions(args.objects, args.workers, args.logs, args.steady, args.latency)
    return [await measured(mode, options) for mode in modes]


def parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all", help="the mode(s) to measure")
    parser.add_argument("--objects", type=int, default=1_000, help="objects of each mode's burst")
    parser.add_argument("--workers", type=int, default=2, help="worker pool processes of each mode")
    parser.add_argument(
        "--steady",
        type=int,
        default=200,
        help="objects of the steady phase after the burst, created at half its objects/s (0: none;"
        " edge: up to 10 downstream changes, each taking about an upsync period)",
    )
    parser.add_argument("--latency", default="0", help="devcluster --latency of every API server, e.g. 20ms")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    parser.add_argument("--logs", help="keep the process logs in new directories under this one")
    parser.add_argument(
        "--qps",
        type=float,
        default=1000,
        help="syncflow's request budget per endpoint, burst twice that (default 1000: the baselines have"
        " none, so the budget, 200 by default, is not what a run measures; 0: syncflow's default)",
    )
    return parser


def main() -> None:
    args = parser().parse_args()
    if args.qps:  # every mode's processes take their environment from this one's
        os.environ["SYNCFLOW_ENDPOINT_QPS"] = f"{args.qps:g}"
        os.environ["SYNCFLOW_ENDPOINT_BURST"] = f"{2 * args.qps:g}"
    try:
        figures = asyncio.run(run(args))
        print(as_json(figures) if args.json else table(figures))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
