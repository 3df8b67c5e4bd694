"""Start-up time of the ``syncflow`` command, against the interpreter's own start-up.

Runs each command ``--runs`` times (after ``--warmup`` runs) and prints mean, median and best wall
time: ``syncflow --help``, ``syncflow --version`` and ``syncflow worker --help`` next to the
baselines ``python -c pass`` (the floor every command pays) and ``python -c 'import click'`` (the
floor of a click CLI). Also prints what ``--help`` imports that costs most (``python -X importtime``)
and the load average before and after, since other work on the machine moves every figure.

Run: ``.venv/bin/python -m bench.startup``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
PYTHON = sys.executable
SYNCFLOW = str(BIN / "syncflow")


def timed(argv: list[str], runs: int, warmup: int) -> list[float]:
    """Wall seconds of each of ``runs`` runs of ``argv`` (output discarded)."""
    for _ in range(warmup):
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)
        times.append(time.perf_counter() - start)
    return times


def top_imports(count: int) -> list[tuple[int, str]]:
    """The ``count`` costliest top-level imports of ``syncflow --help`` (cumulative µs, module)."""
    probe = "from syncflow.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
    result = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    entries = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        # importtime indents nested imports by two spaces after the one that follows the bar
        if cumulative.strip().isdigit() and not name.startswith("  "):
            entries.append((int(cumulative), name.strip()))
    return sorted(entries, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "python -c 'import click'": [PYTHON, "-c", "import click"],
        "syncflow --help": [SYNCFLOW, "--help"],
        "syncflow --version": [SYNCFLOW, "--version"],
        "syncflow worker --help": [SYNCFLOW, "worker", "--help"],
    }
    results = {name: timed(argv, args.runs, args.warmup) for name, argv in commands.items()}
    floor = statistics.median(results["python -c pass"])
    print(f"{'command':<28} {'mean ms':>8} {'median ms':>10} {'best ms':>8} {'x python':>9}")
    for name, times in results.items():
        median = statistics.median(times)
        print(
            f"{name:<28} {statistics.mean(times) * 1000:8.1f} {median * 1000:10.1f} "
            f"{min(times) * 1000:8.1f} {median / floor:9.2f}"
        )
    print("costliest imports of syncflow --help (cumulative ms):")
    for micros, name in top_imports(5):
        print(f"  {micros / 1000:7.1f}  {name}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
