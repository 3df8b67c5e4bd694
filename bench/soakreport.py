"""What ``bench.soak`` reports: each convergence check's figures (``Tally``), each mode's outcome, and the
summary table of ``--mode all``."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.soakforeign import Verdict

EXAMPLES = 3
"""Examples kept of each kind of thing wrong."""


@dataclass
class Tally:
    """One convergence check."""

    sources: int = 0
    equal: int = 0
    missing: int = 0
    stale: int = 0
    duplicated: int = 0
    orphaned: int = 0
    terminating: int = 0
    notes_kept: int = 0
    notes_lost: int = 0
    conflicts_expected: int = 0
    conflicts_found: int = 0
    blocked_copied: int = 0
    parked: int = 0
    busy: int = 0
    foreign: Verdict = field(default_factory=Verdict)
    spurious: int = 0
    deletions: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)
    """A few examples of each kind of thing wrong."""

    def example(self, kind: str, text: str) -> None:
        """Keep ``text`` as an example of ``kind`` (the first ``EXAMPLES`` of each kind)."""
        kept = self.examples.setdefault(kind, [])
        if len(kept) < EXAMPLES:
            kept.append(text)

    def shown(self) -> list[str]:
        """The examples to print, each named by its kind."""
        return [f"{kind}: {text}" for kind, texts in self.examples.items() for text in texts]

    @property
    def settled(self) -> bool:
        """Every copy equal to its source, nothing left over, nothing parked but the expected conflicts."""
        bad = self.missing + self.stale + self.duplicated + self.orphaned + self.terminating
        unexpected = self.notes_lost + self.parked + self.blocked_copied
        adopted = self.foreign.adopted == self.foreign.adoptable
        return bad + unexpected == 0 and self.conflicts_found == self.conflicts_expected and adopted

    @property
    def clean(self) -> bool:
        """Nothing foreign touched and no copy deleted behind the soak's back (no later check undoes it)."""
        return self.foreign.changed + self.foreign.deleted + self.spurious == 0

    def line(self) -> str:
        """The figures on one line."""
        f = self.foreign
        adopted = f" (adopted {f.adopted} / expected {f.adoptable})" if f.adoptable else ""
        return (
            f"sources {self.sources}  copies equal {self.equal} / missing {self.missing} / stale {self.stale}"
            f" / duplicated {self.duplicated} / orphaned {self.orphaned}; kcp terminating {self.terminating};"
            f" local-only fields kept {self.notes_kept} / lost {self.notes_lost};"
            f" conflicts expected {self.conflicts_expected} / found {self.conflicts_found};"
            f" blocked sources with a copy {self.blocked_copied}; parked otherwise {self.parked};"
            f" foreign untouched {f.untouched} / changed {f.changed} / deleted {f.deleted}{adopted};"
            f" spurious deletions {self.spurious} (legitimate {self.deletions}); queue busy {self.busy}"
        )


@dataclass
class Outcome:
    """One mode's soak: what it printed and its summary row."""

    mode: str
    lines: list[str] = field(default_factory=list)
    tally: Tally | None = None
    settled_s: float | None = None
    kills: int = 0
    paused: str = ""
    wall_s: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    """1-minute load average before and after."""
    failure: str = ""

    @property
    def ok(self) -> bool:
        return self.tally is not None and self.settled_s is not None and self.tally.clean

    def verdict(self) -> str:
        """The result in a few words."""
        if self.tally is None:
            return "FAILED (bench)"
        if self.settled_s is None:
            return "NOT converged"
        return "converged" if self.tally.clean else "FAILED"

    def cells(self) -> list[str]:
        """The summary table's cells."""
        t = self.tally
        if t is None:
            return [self.mode, self.verdict(), self.failure.splitlines()[0][:100] if self.failure else ""]
        return [
            self.mode,
            self.verdict(),
            str(t.sources),
            str(t.equal),
            f"{t.conflicts_expected} / {t.conflicts_found}",
            f"{t.foreign.untouched} / {t.foreign.changed + t.foreign.deleted}"
            + (f" +{t.foreign.adopted} adopted" if t.foreign.adoptable else ""),
            str(t.spurious),
            str(self.kills),
            f"{self.settled_s:.0f}" if self.settled_s is not None else "-",
            f"{self.wall_s:.0f}",
            f"{self.load[0]:.2f} -> {self.load[1]:.2f}",
            self.paused,
        ]


COLUMNS = (
    ("mode", 9),
    ("result", 14),
    ("sources", 8),
    ("equal", 6),
    ("conflicts exp / found", 22),
    ("foreign ok / touched", 21),
    ("spurious del.", 14),
    ("kills", 6),
    ("converge s", 11),
    ("wall s", 7),
    ("load (1 min)", 13),
    ("paused", 0),
)


def table(outcomes: list[Outcome]) -> str:
    """The summary table of several modes' soaks."""
    rows = [[name for name, _ in COLUMNS], *(o.cells() for o in outcomes)]
    return "\n".join(
        " ".join(cell.ljust(width) for cell, (_, width) in zip(row, COLUMNS, strict=False)).rstrip()
        for row in rows
    )
