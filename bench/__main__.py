"""Every mode's benchmark beside its fair baseline, in one table (``python -m bench --mode all``).

Each selected mode runs on its own fresh stack (devclusters, a private ``redis-server``, syncflow's
processes), one after another: syncflow syncs ``--objects`` objects in a burst, then ``--steady`` more
created at half the burst's objects/s (create → copy latency; workload: status back upstream too; edge:
the lag of downstream changes to the mailbox), then the mode's fair baseline does the burst's writes
from this process with 8 clients, and again with as many clients as ``--workers`` on a fresh stack of
its own (docs/scaling.md's fair comparison: the baseline at syncflow's concurrency). One table
follows (``--json``: the same figures as JSON), with the load average before and after each mode and
what each baseline does.

``--rounds N`` runs the selected modes N times in turn, each time on fresh stacks, printing each
round's table as it ends, then a summary: each mode's figures as their median over the rounds with
their range. A host's speed drifts by ±20 % within an hour: the median of 3 rounds says more than one.

``--scale-out`` measures instead how a mode's objects/s grows with worker processes: the burst alone
with 1, 2 and 4 processes (``--scale-workers``), each on a fresh stack with ``devcluster --latency 20ms``
(``--latency``), no baseline, and the ratio per doubling.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bench import clusters, e2e, edge, workload
from bench.e2e import BenchError
from bench.figures import (
    ModeFigures,
    RunOptions,
    as_json,
    loaded,
    rounds_json,
    rounds_table,
    scale_json,
    scale_table,
    table,
)
from bench.support import HostReading, private_redis

Measure = Callable[[RunOptions, str], Awaitable[ModeFigures]]
MODES: dict[str, Measure] = {
    "publish": e2e.measure,
    "workload": workload.measure,
    "clusters": clusters.measure,
    "edge": edge.measure,
}
"""Each mode's ``measure(options, redis_url)``, in the order ``all`` runs them."""
SCALING = ("publish", "workload", "clusters")
"""The modes ``--scale-out`` measures (edge's initial upsync is one poll's writes)."""
SCALE_ALL = ("workload", "clusters")
"""What ``--scale-out --mode all`` measures: the modes whose throughput should grow with workers."""
OBJECTS, SCALE_OBJECTS = 1_000, 300
"""``--objects`` by default, and with ``--scale-out`` (modest: 1 process at 20 ms RTT is slow)."""
SCALE_LATENCY = "20ms"
"""``--latency`` by default with ``--scale-out``: remote API servers, so waits can overlap."""


async def measured(mode: str, options: RunOptions) -> ModeFigures:
    """One mode's figures on a fresh stack and Redis, with the load averages before and after and the
    share of CPU time stolen by the host meanwhile."""
    before = HostReading.now()
    with tempfile.TemporaryDirectory() as scratch, private_redis(Path(scratch)) as url:
        figures = await MODES[mode](options, url)
    return loaded(figures, before.load, before.steal_since())


Report = Callable[[int, Sequence[ModeFigures]], None]
"""Told each round's number (from 1) and figures as the round ends."""


async def run(
    args: argparse.Namespace, report: Report = lambda _round, _figures: None
) -> list[list[ModeFigures]]:
    """Measure each selected mode, ``args.rounds`` times in turn; each round's figures."""
    modes = list(MODES) if args.mode == "all" else [args.mode]
    options = RunOptions(args.objects, args.workers, args.logs, args.steady, args.latency)
    rounds: list[list[ModeFigures]] = []
    for number in range(1, args.rounds + 1):
        rounds.append([await measured(mode, options) for mode in modes])
        report(number, rounds[-1])
    return rounds


async def scale_out(args: argparse.Namespace) -> dict[str, dict[int, ModeFigures]]:
    """Each selected mode's burst with each of ``--scale-workers`` worker processes, without baseline or
    steady phase."""
    modes = SCALE_ALL if args.mode == "all" else (args.mode,)
    runs: dict[str, dict[int, ModeFigures]] = {}
    for mode in modes:
        for workers in args.scale_workers:
            options = RunOptions(args.objects, workers, args.logs, 0, args.latency, baseline=False)
            runs.setdefault(mode, {})[workers] = await measured(mode, options)
    return runs


def positive(text: str) -> int:
    """A count of at least 1, for argparse."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {count}")
    return count


def print_round(rounds: int) -> Report:
    """Prints a round's table as it ends, under its number of ``rounds``."""

    def report(number: int, figures: Sequence[ModeFigures]) -> None:
        print(f"round {number} of {rounds}\n{table(figures)}\n", flush=True)

    return report


def parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all", help="the mode(s) to measure")
    parser.add_argument(
        "--objects",
        type=int,
        help=f"objects of each mode's burst (default {OBJECTS}; with --scale-out {SCALE_OBJECTS})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker pool processes of each mode, and the clients of its second baseline",
    )
    parser.add_argument(
        "--steady",
        type=int,
        default=200,
        help="objects of the steady phase after the burst, created at half its objects/s (0: none;"
        " edge: up to 10 downstream changes, each taking about an upsync period)",
    )
    parser.add_argument(
        "--latency",
        help=f"devcluster --latency of every API server (default 0; with --scale-out {SCALE_LATENCY})",
    )
    parser.add_argument(
        "--scale-out",
        action="store_true",
        help="instead of the table: the burst with each of --scale-workers worker processes, each on a"
        f" fresh stack, and the ratio per doubling ({', '.join(SCALING)}; all: {', '.join(SCALE_ALL)})",
    )
    parser.add_argument(
        "--scale-workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="worker process counts of --scale-out, comma-separated (default 1,2,4)",
    )
    parser.add_argument(
        "--rounds",
        type=positive,
        default=1,
        help="run the selected modes this many times in turn, each on fresh stacks, then sum the rounds up:"
        " each figure's median and range (default 1)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    parser.add_argument("--logs", help="keep the process logs in new directories under this one")
    parser.add_argument(
        "--qps",
        type=float,
        default=5000,
        help="syncflow's request budget per endpoint, burst twice that (default 5000: the baselines have"
        " none, and edge's upsync writes over 1,000 objects/s, so the budget, 200 by default, is not what"
        " a run measures; 0: syncflow's default)",
    )
    return parser


def main() -> None:
    command = parser()
    args = command.parse_args()
    if args.scale_out and args.mode not in (*SCALING, "all"):
        command.error(f"--scale-out measures {', '.join(SCALING)} (or all: {', '.join(SCALE_ALL)})")
    if args.scale_out and args.rounds > 1:
        command.error("--rounds repeats the table's runs; --scale-out runs each worker count once")
    if args.objects is None:
        args.objects = SCALE_OBJECTS if args.scale_out else OBJECTS
    if args.latency is None:
        args.latency = SCALE_LATENCY if args.scale_out else "0"
    if args.qps:  # every mode's processes take their environment from this one's
        os.environ["SYNCFLOW_ENDPOINT_QPS"] = f"{args.qps:g}"
        os.environ["SYNCFLOW_ENDPOINT_BURST"] = f"{2 * args.qps:g}"
    try:
        if args.scale_out:
            runs = asyncio.run(scale_out(args))
            print(scale_json(runs) if args.json else scale_table(runs, args.latency))
        elif args.rounds == 1:
            [figures] = asyncio.run(run(args))
            print(as_json(figures) if args.json else table(figures))
        elif args.json:
            print(rounds_json(asyncio.run(run(args))))
        else:
            rounds = asyncio.run(run(args, print_round(args.rounds)))
            print(rounds_table([f for figures in rounds for f in figures]))
    except BenchError as exc:
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
