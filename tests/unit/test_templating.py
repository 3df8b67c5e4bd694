"""The Go text/template subset: syntax, Go's data semantics, the functions, and actionable errors."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.templating import Struct, TemplateError, compile_template, sha3sum, short_hash

DATA: dict[str, Any] = {
    "Object": {
        "metadata": {"namespace": "objnamespace", "name": "objname", "labels": {"app": "web"}},
        "spec": {"items": ["a", None, "b"], "empty": [], "null": None, "count": 3, "ratio": 0.5},
    },
    "ClusterName": "testcluster",
    "ClusterPath": "root:org:team",
}


def render(text: str, data: dict[str, Any] | None = None) -> str:
    return compile_template(text).render(DATA if data is None else data)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # text, actions, trim markers and comments
        ("plain text", "plain text"),
        ("{{ .ClusterName }}", "testcluster"),
        ("{{.ClusterPath}}", "root:org:team"),
        ("a  {{- .ClusterName -}}  b", "atestclusterb"),
        ("a \n{{- /* note */ -}}\n b", "ab"),
        ("a{{/* note */}}b", "ab"),
        ("{{ -3 }}", "-3"),
        # field chains and variables
        ("{{ .Object.metadata.labels.app }}", "web"),
        ("{{ $.Object.metadata.name }}", "objname"),
        ("{{ $m := .Object.metadata }}{{ $m.name }}", "objname"),
        ("{{ $x := 1 }}{{ $x = 2 }}{{ $x }}", "2"),
        ("{{ (.Object.metadata).namespace }}", "objnamespace"),
        # Go's missing-key and nil behaviour for maps
        ("{{ .Object.metadata.missing }}", "<no value>"),
        ("{{ .Object.nope.deeper }}", "<no value>"),
        ("{{ .Object.spec.null }}", "<no value>"),
        ("{{ print .Object.spec.null }}", "<nil>"),
        # literals
        ('{{ "tab\\tq\\"\\u00e9" }}', 'tab\tq"é'),
        ("{{ `raw\\n` }}", "raw\\n"),
        ("{{ 0x1F }} {{ 010 }} {{ 1_000 }} {{ 2.5 }} {{ true }}", "31 8 1000 2.5 true"),
        # pipelines: the piped value is the last argument
        ("{{ .Object.metadata.name | upper | lower }}", "objname"),
        ('{{ "x" | printf "%s-%s" "a" }}', "a-x"),
        ('{{ .Object.metadata.missing | default "fallback" }}', "fallback"),
        ('{{ .Object.metadata.name | default "fallback" }}', "objname"),
        ('{{ default "fallback" "" }}', "fallback"),
        ('{{ join "-" (list "a" "b" 3) }}', "a-b-3"),
        ('{{ .Object.spec.items | join "," }}', "a,b"),
        ('{{ list 1 "a" (list 2) }}', "[1 a [2]]"),
        # if / else if / else, with, range
        ('{{ if eq .ClusterName "x" "testcluster" }}yes{{ else }}no{{ end }}', "yes"),
        ("{{ if .Object.spec.empty }}yes{{ else }}no{{ end }}", "no"),
        ("{{ if .Object.missing }}A{{ else if .ClusterName }}B{{ else }}C{{ end }}", "B"),
        ("{{ if 0 }}A{{ else if '' }}B{{ else }}C{{ end }}".replace("''", '""'), "C"),
        ("{{ if $n := .Object.spec.count }}{{ $n }}{{ end }}", "3"),
        ("{{ with .Object.metadata }}{{ .name }}{{ end }}", "objname"),
        ("{{ with .Object.missing }}x{{ else with .ClusterName }}{{ . }}{{ end }}", "testcluster"),
        ("{{ with .Object.spec.empty }}x{{ else }}empty{{ end }}", "empty"),
        ("{{ range .Object.spec.items }}[{{ . }}]{{ end }}", "[a][<no value>][b]"),
        ("{{ range $i, $e := list 5 6 }}{{ $i }}={{ $e }};{{ end }}", "0=5;1=6;"),
        ("{{ range $k, $v := .Object.metadata }}{{ $k }},{{ end }}", "labels,name,namespace,"),
        ("{{ range .Object.spec.empty }}x{{ else }}none{{ end }}", "none"),
        ("{{ range 3 }}{{ . }}{{ end }}", "012"),
        ("{{ range .Object.missing }}x{{ else }}nothing{{ end }}", "nothing"),
        ("{{ range .Object.spec.null }}x{{ else }}nothing{{ end }}", "nothing"),
    ],
)
def test_renders(text: str, want: str) -> None:
    assert render(text) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{{ sha3sum "objname" }}', hashlib.sha3_256(b"objname").hexdigest()),
        ('{{ sha3short "objnamespace" }}', "2928c2aa0e510f017f07"),
        ("{{ .Object.metadata.name | sha3short }}", "73d08a1ba188f1340dae"),
        ('{{ sha3short "objname" 6 }}', "73d08a"),
        ('{{ sha3short "objname" 100 }}', hashlib.sha3_256(b"objname").hexdigest()),
        ('{{ shortHash "my-test-thing" }}', "c346c8ceb5d104cc783d"),
        ('{{ lower "AbC" }}{{ upper "AbC" }}', "abcABC"),
        ('[{{ trim "  x \\n" }}]', "[x]"),
        ('{{ len "héllo" }} {{ len .Object.metadata }} {{ len (list 1 2) }}', "6 3 2"),
        (
            '{{ eq 1 1 }} {{ eq "a" "b" }} {{ eq .Object.spec.null nil }} {{ eq 1 nil }}',
            "true false true false",
        ),
        ("{{ ne 1 2 }} {{ ne 2 2 }}", "true false"),
        ('{{ and 1 0 }} {{ and 1 "x" }} {{ or 0 "" }} {{ or 0 "z" }}', "0 x  z"),
        ("{{ not .Object.missing }} {{ not 1 }}", "true false"),
        ("{{ or 1 (lower 5) }}", "1"),  # or stops before the bad call, as Go's does
        ('{{ printf "%s|%d|%q|%v|%t" "a" 42 "x\\ny" (list 1 2) true }}', 'a|42|"x\\ny"|[1 2]|true'),
        (
            '{{ printf "%05d|%-4s|%4s|%.2s|%x|%.1f|%%" 42 "ab" "ab" "abc" 255 0.25 }}',
            "00042|ab  |  ab|ab|ff|0.2|%",
        ),
        ('{{ printf "%d %s" "x" }}', "%!d(string=x) %!s(MISSING)"),
        ('{{ printf "%s" "a" 1 }}', "a%!(EXTRA int=1)"),
        ('{{ printf "%v" .Object.metadata.labels }}', "map[app:web]"),
        ('{{ print 1 2 "a" "b" 3.0 }}', "1 2ab3"),
        ("{{ print 1e21 1e-05 123456.0 1234567.0 }}", "1e+21 1e-05 123456 1.234567e+06"),
        ("{{ print list }}", "[]"),
        ('{{ printf "%s|%s|%05d" (list "a" "b") nil -42 }}', "[a b]|%!s(<nil>)|-0042"),
        ('[{{ join "," .Object.spec.null }}]', "[]"),
    ],
)
def test_functions(text: str, want: str) -> None:
    assert render(text) == want


def test_hash_helpers_match_hashlib() -> None:
    assert sha3sum("objname") == hashlib.sha3_256(b"objname").hexdigest()
    assert short_hash("my-test-thing") == "c346c8ceb5d104cc783d"


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("{{ .ClusterName", "line 1, column 1", 'unclosed action: expected "}}"'),
        ("ok\n  {{ if .x }}", "line 2, column 6", "unclosed {{if}}: expected {{end}}"),
        ("{{ end }}", "line 1, column 4", "unexpected {{end}}"),
        ("{{ if 1 }}{{ else }}{{ else }}{{ end }}", "line 1, column 24", "expected {{end}} for the {{if}}"),
        ("{{ .x | }}", "line 1, column 9", "missing command"),
        ("{{ }}", "line 1, column 4", "missing command"),
        ('{{ .x | "a" }}', "line 1, column 13", "non executable command in pipeline stage 2"),
        ("{{ .x | . }}", "line 1, column 11", "non executable command in pipeline stage 2"),
        ("{{ (1 }}", "line 1, column 7", 'expected ")"'),
        ("{{ foo .x }}", "line 1, column 4", "function 'foo' not defined"),
        ("{{ sha512 .x }}", "line 1, column 4", "function 'sha512' not defined"),
        ("{{ $y }}", "line 1, column 4", "undefined variable '$y'"),
        ("{{ if 1 }}{{ $v := 1 }}{{ end }}{{ $v }}", "line 1, column 36", "undefined variable '$v'"),
        ('{{ template "x" }}', "line 1, column 4", "{{template}} is not supported"),
        ('{{ .x"a" }}', "line 1, column 6", "separate arguments with spaces"),
        ('{{ "a".b }}', "line 1, column 7", "unexpected .b after"),
        ("{{/* note */ }}", "line 1, column 11", "comment ends before the closing delimiter"),
        ("{{/* note", "line 1, column 1", "unclosed comment"),
        ('{{ "\\q" }}', "line 1, column 4", "invalid escape \\q"),
        ('{{ "abc }}', "line 1, column 4", "unterminated quoted string"),
        ("{{ `abc }}", "line 1, column 4", "unterminated raw string"),
        ("{{ 12ab }}", "line 1, column 4", "bad number syntax"),
        ("{{ 09 }}", "line 1, column 4", "bad number syntax"),
        ("{{ .x ; }}", "line 1, column 7", "unexpected ';'"),
        ("{{ else }}", "line 1, column 4", "unexpected {{else}}"),
        ("{{ range $i, $e }}{{ end }}", "line 1, column 17", 'expected ":="'),
        ("{{ if }}{{ end }}", "line 1, column 7", "missing command"),
        (
            "{{ if 1 }}{{ else 1 }}{{ end }}",
            "line 1, column 19",
            "unexpected '1' in {{else}}: expected \"}}\"",
        ),
        ("{{ if 1 }}{{ end 1 }}", "line 1, column 18", "unexpected '1' in {{end}}: expected \"}}\""),
        ("{{ lower end }}", "line 1, column 10", "unexpected keyword 'end' in operand"),
        ("{{ lower := }}", "line 1, column 10", "unexpected ':=' in operand: expected a value"),
    ],
)
def test_compile_errors_say_where_and_what(text: str, where: str, says: str) -> None:
    with pytest.raises(TemplateError) as caught:
        compile_template(text)
    assert str(caught.value).startswith(where + ": ")
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{{ lower 1 }}", "error calling lower: wrong type for argument 1: expected string, got int"),
        ("{{ .Object.missing | lower }}", "expected string, got nil (a missing field?)"),
        ("{{ .Object.metadata.name | sha3short 8 }}", "error calling sha3short: wrong type for argument 1"),
        ('{{ sha3short "a" 0 }}', "invalid length 0"),
        ('{{ sha3short "a" 1 2 }}', "expected at most one length argument, got 2"),
        ("{{ lower }}", "error calling lower: wrong number of args: want 1 got 0"),
        ('{{ lower "a" "b" }}', "want 1 got 2"),
        ("{{ and }}", "want at least 1 got 0"),
        ("{{ eq 1 }}", "missing argument for comparison"),
        ('{{ eq 1 "a" }}', "incompatible types for comparison: int and string"),
        ("{{ eq 1 1.0 }}", "incompatible types for comparison: int and float64"),
        ("{{ eq (list) 1 }}", "invalid type for comparison: []interface {}"),
        ("{{ len 3 }}", "len of type int"),
        ("{{ nil }}", "nil is not a command"),
        ("{{ .ClusterName 1 }}", ".ClusterName is not a function and cannot take arguments"),
        ('{{ "a" | .ClusterName }}', ".ClusterName is not a function"),
        ("{{ .ClusterName.x }}", "can't evaluate field x in type string"),
        ("{{ .Object.spec.null.x }}", "nil pointer evaluating interface {}.x"),
        ('{{ range "s" }}{{ end }}', "range can't iterate over s (string)"),
        ("{{ range $i, $e := 3 }}{{ end }}", "range can't iterate over 3 (int)"),
        ("{{ .Object.metadata | lower }}", "expected string, got map[string]interface {}"),
        ("{{ $ 1 }}", "$ is not a function"),
        ("{{ (1) 2 }}", "(...) is not a function"),
    ],
)
def test_render_errors_say_what(text: str, says: str) -> None:
    template = compile_template(text)
    with pytest.raises(TemplateError, match=r"^line 1, column") as caught:
        template.render(DATA)
    assert says in str(caught.value)


def test_struct_fields_are_checked_like_a_go_struct() -> None:
    template = compile_template("{{ .ClusterNmae }}")
    assert template.render(dict(DATA)) == "<no value>"
    with pytest.raises(
        TemplateError, match="can't evaluate field ClusterNmae: the data has only ClusterName"
    ):
        template.render(Struct(DATA))


def test_template_is_reusable_and_variables_do_not_leak_between_renders() -> None:
    template = compile_template("{{ $n := .ClusterName }}{{ $n }}")
    assert template.render({"ClusterName": "a"}) == "a"
    assert template.render({"ClusterName": "b"}) == "b"


@given(st.text().filter(lambda s: "{{" not in s))
def test_text_without_actions_renders_to_itself(text: str) -> None:
    assert compile_template(text).render({}) == text


@given(st.text(), st.integers(min_value=1, max_value=64))
def test_sha3short_is_a_prefix_of_sha3sum(value: str, length: int) -> None:
    template = compile_template("{{ sha3short .v .n }}|{{ .v | sha3sum }}")
    short, full = template.render({"v": value, "n": length}).split("|")
    assert len(short) == length
    assert full.startswith(short)


@given(st.lists(st.text(alphabet="abc-xyz", min_size=1)), st.sampled_from(["-", ",", ""]))
def test_join_of_a_list_is_python_join(items: list[str], sep: str) -> None:
    assert compile_template("{{ join .sep .items }}").render({"sep": sep, "items": items}) == sep.join(items)


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n")))
def test_quoted_string_roundtrips_through_printf_q(value: str) -> None:
    quoted = compile_template('{{ printf "%q" .v }}').render({"v": value})
    assert compile_template("{{ " + quoted + " }}").render({}) == value


@pytest.mark.parametrize(
    ("value", "want"), [(float("inf"), "+Inf"), (float("-inf"), "-Inf"), (float("nan"), "NaN")]
)
def test_special_floats_print_as_go(value: float, want: str) -> None:
    assert compile_template("{{ .v }}").render({"v": value}) == want


@pytest.mark.parametrize(
    "text",
    [
        '{{ printf "%050000000d" 1 }}',
        '{{ printf "%.90000000f" 1.5 }}',
        '{{ repeat 100000000 "ab" }}',
        "{{ until 100000000 }}",
        '{{ indent 100000000 "a" }}',
    ],
)
def test_size_amplifying_functions_refuse_before_allocating(text: str) -> None:
    with pytest.raises(TemplateError, match="limit"):
        compile_template(text, limit=1024).render({})


def test_rendering_stops_as_soon_as_the_output_passes_the_limit() -> None:
    template = compile_template('{{ range until 1000 }}{{ printf "%0100d" . }}{{ end }}', limit=1000)
    with pytest.raises(TemplateError, match="output is longer than the limit of 1000 bytes"):
        template.render({})
    assert compile_template("{{ repeat 10 `ab` }}", limit=20).render({}) == "ab" * 10


def test_a_function_result_beyond_the_limit_is_an_error() -> None:
    with pytest.raises(TemplateError, match="error calling join: the result is longer than the limit"):
        text = '{{ $a := repeat 60 "x" }}{{ $l := list $a $a }}{{ join "" $l }}'
        compile_template(text, limit=100).render({})


def test_a_runaway_range_is_stopped_by_the_step_budget() -> None:
    template = compile_template("{{ range $i := until 60000 }}{{ range until 5 }}{{ end }}{{ end }}")
    with pytest.raises(TemplateError, match="steps"):
        template.render({})


def test_methods_of_struct_data_are_called_like_go_methods() -> None:
    from syncflow.templating import Method

    value = Struct(String=Method(lambda: "text"), Get=Method(lambda key: f"got {key}"))
    data = Struct(Value=value)
    text = '{{ .Value.String }} {{ .Value.Get "k" }} {{ "p" | .Value.Get }}'
    assert compile_template(text).render(data) == "text got k got p"


def test_html_mode_refuses_markup_it_cannot_escape_by_context() -> None:
    with pytest.raises(TemplateError, match="HTML markup"):
        compile_template('<a href="{{ .x }}">', html=True)
    assert compile_template("{{ .x }} & 1 < 2", html=True).render({"x": "<b>"}) == "&lt;b&gt; & 1 < 2"
