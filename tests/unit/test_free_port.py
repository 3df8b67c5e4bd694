"""``free_port`` chooses ports that no bind to port 0 can take before the child listens on them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from syncflow.runtime import stack


def test_ports_lie_below_the_ephemeral_range_and_are_never_handed_out_twice() -> None:
    low, _ = stack.ephemeral_range()
    ports = [stack.free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert all(stack.LOWEST_CHOSEN_PORT <= port < low for port in ports)


def test_a_bind_to_port_zero_never_takes_a_chosen_port() -> None:
    chosen = {stack.free_port() for _ in range(20)}
    sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(200)]
    try:
        assert not chosen & {sock.getsockname()[1] for sock in sockets}
    finally:
        for sock in sockets:
            sock.close()


def test_a_port_in_use_is_not_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        monkeypatch.setattr(stack, "ephemeral_range", lambda: (port + 1, 60999))
        monkeypatch.setattr(stack, "LOWEST_CHOSEN_PORT", port)
        assert stack.free_port() != port


def test_the_kernel_chooses_when_the_ephemeral_range_leaves_no_room(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    whole = tmp_path / "ip_local_port_range"
    whole.write_text("1024\t65535\n")
    monkeypatch.setattr(stack, "EPHEMERAL_RANGE_FILE", whole)
    assert stack.ephemeral_range() == (1024, 65535)
    port = stack.free_port()
    assert 1024 <= port <= 65535
    with socket.create_server(("127.0.0.1", port)):
        pass


def test_an_unreadable_range_means_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(stack, "EPHEMERAL_RANGE_FILE", tmp_path / "absent")
    assert stack.ephemeral_range() == stack.DEFAULT_EPHEMERAL_RANGE
