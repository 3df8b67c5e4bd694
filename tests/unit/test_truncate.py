"""Capping outside text at a byte limit."""

from __future__ import annotations

from syncflow.util.truncate import truncate, truncate_lines


def test_short_text_is_unchanged() -> None:
    assert truncate("abc", 3) == "abc"
    assert truncate("é" * 2, 4) == "éé"


def test_long_text_keeps_its_head_and_says_how_much_is_gone() -> None:
    assert truncate("abcdef", 4) == "abcd… (2 bytes more)"
    assert truncate("x" * 1024 * 1024) == "x" * 4096 + f"… ({1024 * 1024 - 4096} bytes more)"


def test_never_cuts_a_character_in_half() -> None:
    # "é" is two bytes: a limit of 3 keeps one and counts the other three bytes as dropped.
    assert truncate("éé" + "x", 3) == "é… (3 bytes more)"


def test_a_long_traceback_keeps_its_last_lines_and_caps_each_line() -> None:
    frames = "".join(f'  File "m{i}.py", line {i}, in f{i}\n    call()\n' for i in range(300))
    text = "Traceback (most recent call last):\n" + frames + "ValueError: " + "x" * 100_000
    capped = truncate_lines(text)
    assert len(capped.encode()) <= 4096
    first, *rest = capped.split("\n")
    assert first.startswith("… (") and first.endswith(" bytes more)")
    assert rest[-1].startswith("ValueError: xxx") and rest[-1].endswith(" bytes more)")
    assert 'File "m299.py"' in capped and 'File "m0.py"' not in capped


def test_a_traceback_with_one_huge_line_keeps_every_line() -> None:
    text = 'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: ' + "x" * 1_000_000
    capped = truncate_lines(text)
    assert capped.startswith('Traceback (most recent call last):\n  File "a.py", line 1\nValueError: x')
    assert capped.endswith(" bytes more)") and len(capped.encode()) < 1024
    assert truncate_lines("short\ntext") == "short\ntext"
