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
from syncflow.extras import MissingExtraError, missing_packages, require

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
    for extra in ("devcluster", "demo", "flower"):
        assert missing_packages(extra) == [], extra


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
