"""Optional features installed as extras (``syncflow[devcluster]``, ``[demo]``, ``[flower]``).

The list of what an extra needs lives in pyproject.toml only; this module reads it back from the
installed distribution's metadata, so a command can say in one line which extra is missing.
"""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import Requirement

DISTRIBUTION = "syncflow"


class MissingExtraError(RuntimeError):
    """A command needs an extra whose packages are not installed."""


def missing_packages(extra: str, distribution: str = DISTRIBUTION) -> list[str]:
    """Names of the packages of ``extra`` (and of the extras it includes) that are not installed.

    Empty when everything is there, or when ``distribution`` itself is not installed (a source
    checkout on ``sys.path``: nothing to check against).
    """
    try:
        requirements = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    missing: list[str] = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is None or not requirement.marker.evaluate({"extra": extra}):
            continue
        if requirement.name == distribution:
            for included in sorted(requirement.extras):
                missing += missing_packages(included, distribution)
            continue
        try:
            metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            missing.append(requirement.name)
    return list(dict.fromkeys(missing))


def require(extra: str, command: str, distribution: str = DISTRIBUTION) -> None:
    """Raise :class:`MissingExtraError` (one line, with the install command) if ``extra`` is missing."""
    missing = missing_packages(extra, distribution)
    if missing:
        raise MissingExtraError(
            f"{command} needs the '{extra}' extra (missing: {', '.join(missing)}): "
            f"pip install '{distribution}[{extra}]'"
        )
