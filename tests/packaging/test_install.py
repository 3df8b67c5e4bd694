"""A lean install: one version, missing extras named, and a ``--help`` that imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

import syncflow
from syncflow.cli import main
from syncflow.cli.extras import MissingExtraError, missing_packages, require

# A distribution that declares extras: one satisfied (pydantic is installed), one not.
FAKE_METADATA = """\
Metadata-Version: 2.4
Name: fakeapp
Version: 1.0
Provides-Extra: server
Provides-Extra: full
Provides-Extra: light
Requires-Dist: click
Requires-Dist: pydantic>=2; extra == "light"
Requires-Dist: surely-not-installed-aaa>=1; extra == "server"
Requires-Dist: pydantic; extra == "server"
Requires-Dist: fakeapp[server,light]; extra == "full"
Requires-Dist: surely-not-installed-bbb; extra == "full"
"""


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    info = tmp_path / "fakeapp-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(FAKE_METADATA)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "fakeapp"


def test_version_comes_from_one_place() -> None:
    assert metadata.version("syncflow") == syncflow.__version__
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"syncflow, version {syncflow.__version__}\n"


def test_missing_packages_of_an_extra(fake_distribution: str) -> None:
    assert missing_packages("light", fake_distribution) == []
    assert missing_packages("server", fake_distribution) == ["surely-not-installed-aaa"]
    assert missing_packages("full", fake_distribution) == [
        "surely-not-installed-aaa",
        "surely-not-installed-bbb",
    ]
    assert missing_packages("no-such-extra", fake_distribution) == []


def test_missing_extra_is_one_line_with_the_install_command(fake_distribution: str) -> None:
    require("light", "fakeapp light", fake_distribution)
    with pytest.raises(MissingExtraError) as caught:
        require("server", "fakeapp serve", fake_distribution)
    assert str(caught.value) == (
        "fakeapp serve needs the 'server' extra (missing: surely-not-installed-aaa): "
        "pip install 'fakeapp[server]'"
    )


def test_an_uninstalled_distribution_has_nothing_to_check() -> None:
    assert missing_packages("devcluster", "surely-not-installed-distribution") == []


def test_the_test_install_has_every_extra() -> None:
    for extra in ("devcluster", "demo", "flower", "console"):
        assert missing_packages(extra) == [], extra


@pytest.mark.integration
def test_help_imports_no_implementation() -> None:
    """``syncflow --help`` must stay fast: the heavy libraries load only in the command that uses them."""
    probe = (
        "import sys\n"
        "from syncflow.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(result.stdout.splitlines()[-1].split())
    assert "syncflow.cli" in loaded
    heavy = {"celery", "kombu", "redis", "kubernetes", "pydantic", "yaml", "aiohttp", "syncflow.tasks"}
    assert loaded & heavy == set()


LEAN_SKIPS = ("syncflow.devcluster", "syncflow.demo", "syncflow.console.web", "syncflow.console.server")
"""What needs an extra: the devcluster and the demo, and the console's web app and its server."""

LEAN_IMPORTS = (
    f"LEAN_SKIPS = {LEAN_SKIPS!r}\n"
    + """
import importlib, importlib.abc, pkgutil, sys
from importlib import metadata
from packaging.requirements import Requirement

def key(name):
    return name.lower().replace("_", "-")

core = set()
def closure(name):
    if key(name) in core:
        return
    core.add(key(name))
    try:
        requirements = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            closure(requirement.name)

closure("syncflow")
lean = set(core)
for requirement in map(Requirement, metadata.requires("syncflow") or []):
    if requirement.marker is not None and key(requirement.name) != "syncflow":
        closure(requirement.name)  # an extra's package and everything it needs
extra_only = core - lean
blocked = {
    top for top, dists in metadata.packages_distributions().items()
    if any(key(d) in extra_only for d in dists)
}

class Lean(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in blocked:
            raise ImportError(f"{name} comes with an extra only")

sys.meta_path.insert(0, Lean())
import syncflow
for module in pkgutil.walk_packages(syncflow.__path__, "syncflow."):
    if not module.name.startswith(LEAN_SKIPS):
        try:
            importlib.import_module(module.name)
        except ImportError as exc:
            print(f"{module.name}: {exc}")
print("blocked:", " ".join(sorted(blocked)))
"""
)


@pytest.mark.integration
def test_the_processes_import_nothing_an_extra_brings() -> None:
    """Worker, watch and beat run from a lean install (``pip install syncflow``, or the image with
    ``EXTRAS=flower``): every module outside the devcluster, the demo and the console's web app
    imports with the packages of every extra made unimportable."""
    result = subprocess.run(
        [sys.executable, "-c", LEAN_IMPORTS], capture_output=True, text=True, timeout=120, check=True
    )
    *failures, blocked = result.stdout.splitlines()
    assert {"jsonpatch", "flower"} <= set(blocked.split()), "the check blocks what extras bring"
    assert failures == []
