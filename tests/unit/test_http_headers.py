"""The kept-alive transport's header reader against http.client's own (``syncflow.kube.transport``)."""

from __future__ import annotations

import http.client
import io

import pytest

from syncflow.kube.transport import MAX_HEADER_LINE, MAX_HEADERS, _Response, parse_headers

ANSWER = (
    b"Audit-Id: 5b9e6c1e\r\n"
    b"Cache-Control: no-cache, private\r\n"
    b"Content-Type: application/json\r\n"
    b"Set-Cookie: a=1\r\n"
    b"Set-Cookie: b=2\r\n"
    b'Warning:   299 - "deprecated"  \r\n'
    b"Content-Length: 12\r\n"
    b"\r\n"
    b'{"kind":"x"}'
)


def test_fields_are_read_as_http_client_reads_them_and_the_body_is_left_unread() -> None:
    ours, theirs = io.BytesIO(ANSWER), io.BytesIO(ANSWER)
    mine, expected = parse_headers(ours), http.client.parse_headers(theirs)
    assert mine.items() == expected.items()
    assert mine.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert mine["content-length"] == "12" and mine.get("warning") == '299 - "deprecated"  '
    assert ours.read() == theirs.read() == b'{"kind":"x"}'


def test_a_folded_line_continues_its_field_and_a_line_without_a_colon_is_skipped() -> None:
    headers = parse_headers(io.BytesIO(b"X-Long: one\r\n\ttwo\r\nnot a field\r\nX-Next: 3\n\n"))
    assert headers.items() == [("X-Long", "one two"), ("X-Next", "3")]


def test_an_answer_ended_before_its_blank_line_keeps_the_fields_read() -> None:
    assert parse_headers(io.BytesIO(b"A: 1\r\nB: 2\r\n")).items() == [("A", "1"), ("B", "2")]


def test_a_header_block_over_http_clients_limits_is_refused_as_it_refuses_it() -> None:
    too_long = b"X: " + b"a" * MAX_HEADER_LINE + b"\r\n\r\n"
    for reader in (parse_headers, http.client.parse_headers):
        with pytest.raises(http.client.LineTooLong):
            reader(io.BytesIO(too_long))
    fields = [b"X-%d: v\r\n" % i for i in range(MAX_HEADERS)]
    for reader in (parse_headers, http.client.parse_headers):  # the blank end counts as a line
        with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
            reader(io.BytesIO(b"".join(fields) + b"\r\n"))
        assert len(reader(io.BytesIO(b"".join(fields[1:]) + b"\r\n"))) == MAX_HEADERS - 1


def test_kept_connections_read_answers_with_this_reader() -> None:
    """The standard library's begin() is used with the reader bound in; a begin() that stopped
    naming parse_headers would bypass it unnoticed, so this says when that happens."""
    assert "parse_headers" in http.client.HTTPResponse.begin.__code__.co_names
    assert _Response.begin.__globals__["parse_headers"] is parse_headers
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Folded: a\r\n b\r\n\r\n{}"
    response = _Response(FakeSocket(answer))
    response.begin()
    assert (response.status, response.length, response.headers["X-Folded"]) == (200, 2, "a b")
    assert response.read() == b"{}"


class FakeSocket:
    """What ``HTTPResponse`` reads an answer from: ``makefile`` over fixed bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.data))
