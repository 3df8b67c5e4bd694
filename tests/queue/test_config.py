"""The settings model: defaults, sources and their priority, and errors that name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from syncflow.config import ConfigError, load_settings
from syncflow.queue.celeryconf import celery_config


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    names = (
        "SYNCFLOW_CONFIG",
        "SYNCFLOW_REDIS_URL",
        "SYNCFLOW_BROKER_URL",
        "SYNCFLOW_AGENT_NAME",
        "SYNCFLOW_LEASE_TTL",
    )
    for name in names:
        monkeypatch.delenv(f"SYNCFLOW_{name}", raising=False)


def test_defaults() -> None:
    settings = load_settings()
    assert settings.redis_url == "redis://127.0.0.1:6379/0"
    assert settings.agent_name == "syncflow"
    assert (settings.backoff_base, settings.backoff_cap) == (0.005, 300.0)
    assert settings.task_time_limit < settings.lease_ttl < settings.visibility_timeout


def test_flags_beat_environment_beats_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "syncflow.yaml"
    config.write_text("agent_name: from-file\nlease_ttl: 100\nredis_url: redis://file:6379/1\n")
    monkeypatch.setenv("SYNCFLOW_CONFIG", str(config))
    monkeypatch.setenv("SYNCFLOW_AGENT_NAME", "from-env")
    settings = load_settings(redis_url="redis://flag:6379/2")
    assert (settings.redis_url, settings.agent_name, settings.lease_ttl) == (
        "redis://flag:6379/2",
        "from-env",
        100,
    )


def test_endpoint_limits_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNCFLOW_ENDPOINT_LIMITS", '{"kcp": {"qps": 5, "burst": 10}}')
    settings = load_settings()
    assert (settings.endpoint_limit("kcp").qps, settings.endpoint_limit("kcp").burst) == (5, 10)
    assert settings.endpoint_limit("cluster").qps == settings.endpoint_qps


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ({"agent_name": "Not_A_Label"}, "agent_name"),
        ({"log_format": "xml"}, "log_format"),
        ({"lease_ttl": 30}, "lease_ttl"),  # below the default task time limit of 60 s
        ({"visibility_timeout": 80}, "visibility_timeout"),  # below the default lease TTL of 90 s
        ({"max_attempts": 0}, "max_attempts"),
    ],
)
def test_errors_name_the_bad_field(flags: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load_settings(**flags)


def test_unknown_yaml_field_is_named(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("lease_tll: 100\n")
    with pytest.raises(ConfigError, match="lease_tll") as failure:
        load_settings(config)
    assert str(config) in str(failure.value)


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "absent.yaml")


def test_the_broker_is_redis_url_unless_broker_url_names_another() -> None:
    default = load_settings()
    assert (default.celery_broker_url, default.broker_kind) == (default.redis_url, "redis")
    rabbit = load_settings(broker_url="amqp://guest:guest@rabbit:5672/agent-a", broker_quorum_queues=True)
    assert (rabbit.celery_broker_url, rabbit.broker_kind) == (
        "amqp://guest:guest@rabbit:5672/agent-a",
        "amqp",
    )
    config = celery_config(rabbit)
    assert config["broker_url"] == rabbit.broker_url
    assert config["broker_transport_options"] == {"confirm_publish": True}  # no Redis-only options
    assert {q.queue_arguments["x-queue-type"] for q in config["task_queues"]} == {"quorum"}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"redis_url": "redis+cluster://node:7000"}, "a Redis Cluster cannot be Celery's broker"),
        ({"broker_quorum_queues": True}, "broker_quorum_queues needs a RabbitMQ broker_url"),
        ({"broker_url": "sqs://queue"}, "want redis://, rediss:// or amqp://"),
    ],
)
def test_broker_settings_that_cannot_work_are_refused(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(**flags)


def test_a_cluster_for_the_state_with_a_separate_broker() -> None:
    settings = load_settings(redis_url="redis+cluster://node:7000", broker_url="redis://broker:6379/0")
    assert (settings.celery_broker_url, settings.broker_kind) == ("redis://broker:6379/0", "redis")
