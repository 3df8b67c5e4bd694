"""Every mode's benchmark beside its fair baseline, in one table (``python -m bench --mode all``).

Each selected mode runs on its own fresh stack (devclusters, a private ``redis-server``, syncflow's
processes), one after another: syncflow syncs ``--objects`` objects, then the mode's fair baseline does
the same writes from this process. One table follows (``--json``: the same figures as JSON), with the
load average before and after each mode and what each baseline does.
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
from bench.figures import ModeFigures, as_json, loaded, table
from bench.support import private_redis

Measure = Callable[[int, int, str | None, str], Awaitable[ModeFigures]]
MODES: dict[str, Measure] = {
    "publish": e2e.measure,
    "workload": workload.measure,
    "clusters": clusters.measure,
    "edge": edge.measure,
}
"""Each mode's ``measure(objects, workers, logs, redis_url)``, in the order ``all`` runs them."""


async def run(args: argparse.Namespace) -> list[ModeFigures]:
    """Measure each selected mode on a fresh stack and Redis."""
    modes = list(MODES) if args.mode == "all" else [args.mode]
    figures = []
    for mode in modes:
        before = os.getloadavg()
        with tempfile.TemporaryDirectory() as scratch, private_redis(Path(scratch)) as url:
            measured = await MODES[mode](args.objects, args.workers, args.logs, url)
        figures.append(loaded(measured, before))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all", help="the mode(s) to measure")
    parser.add_argument("--objects", type=int, default=1_000, help="objects each mode syncs")
    parser.add_argument("--workers", type=int, default=2, help="worker pool processes of each mode")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    parser.add_argument("--logs", help="keep the process logs in new directories under this one")
    parser.add_argument(
        "--qps",
        type=float,
        default=1000,
        help="syncflow's request budget per endpoint, burst twice that (default 1000: the baselines have"
        " none, so the budget, 200 by default, is not what a run measures; 0: syncflow's default)",
    )
    args = parser.parse_args()
    if args.qps:  # every mode's processes take their environment from this one's
        os.environ["SYNCFLOW_ENDPOINT_QPS"] = f"{args.qps:g}"
        os.environ["SYNCFLOW_ENDPOINT_BURST"] = f"{2 * args.qps:g}"
    try:
        figures = asyncio.run(run(args))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None
    print(as_json(figures) if args.json else table(figures))


if __name__ == "__main__":
    main()
