"""Label and field selectors: apimachinery's syntax, errors and matching."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncflow.util.selectors import FieldSelector, LabelSelector, Op, Requirement, SelectorError

LABELS = {"app": "web", "tier": "front", "env": "prod"}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app in (web,db)", True),
        ("app in (db)", False),
        ("missing in (web)", False),
        ("app notin (db,cache)", True),
        ("app notin (web)", False),
        ("missing notin (web)", True),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("  app = web ,  tier in ( front , back ) ", True),
        ("app=web,!missing,env", True),
        ("in=x", False),
        ("app in (in,notin)", False),
    ],
)
def test_parse_and_match(text: str, matches: bool) -> None:
    assert LabelSelector.parse(text).matches(LABELS) is matches


def test_empty_value_selects_empty_label() -> None:
    sel = LabelSelector.parse("a=")
    assert sel.matches({"a": ""})
    assert not sel.matches({"a": "x"})
    assert not sel.matches({})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a,", "found '', expected: identifier after ','"),
        ("x=a b", "found 'b', expected: ',' or 'end of string'"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        ("x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"),
        ("x in a", "unable to parse requirement: found 'a' expected: '('"),
        ("x in (a", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("x=(a)", "unable to parse requirement: found '(', expected: identifier"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("x>1", "unable to parse requirement: found '>', expected: in, notin, =, ==, !=, gt, lt"),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.parse(text)
    assert str(err.value) == message


def test_invalid_key_and_value_are_rejected_with_kube_wording() -> None:
    with pytest.raises(
        SelectorError, match=r'^unable to parse requirement: invalid label key "Foo_": name part must'
    ):
        LabelSelector.parse("Foo_=x")
    with pytest.raises(SelectorError, match=r'invalid label value: "a b\$": at key: "k": a valid label must'):
        LabelSelector.from_dict({"matchLabels": {"k": "a b$"}})
    with pytest.raises(SelectorError, match="invalid label key"):
        LabelSelector.parse("a/b/c")


def test_str_sorts_by_key_and_values() -> None:
    sel = LabelSelector.parse("z in (b,a,b), !y, a==1, m")
    assert str(sel) == "a==1,m,!y,z in (a,b)"


def test_set_with_trailing_comma_holds_empty_value() -> None:
    sel = LabelSelector.parse("k in (a,)")
    assert sel.requirements == (Requirement("k", Op.IN, ("", "a")),)
    assert sel.matches({"k": ""})


def test_from_dict() -> None:
    sel = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "back"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "env", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches(LABELS)
    assert not sel.matches({**LABELS, "legacy": "1"})
    assert not sel.matches({**LABELS, "env": "dev"})
    assert str(sel) == "app=web,env notin (dev),env,!legacy,tier in (back,front)"


@pytest.mark.parametrize("raw", [None, {}, {"matchLabels": {}, "matchExpressions": []}])
def test_from_dict_empty_selects_everything(raw: dict[str, object] | None) -> None:
    sel = LabelSelector.from_dict(raw)
    assert sel.empty
    assert sel.matches({}) and sel.matches(LABELS)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ({"key": "a", "operator": "Gt", "values": ["1"]}, '"Gt" is not a valid label selector operator'),
        (
            {"key": "a", "operator": "In", "values": []},
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"key": "a", "operator": "Exists", "values": ["x"]},
            "values set must be empty for exists and does not exist",
        ),
    ],
)
def test_from_dict_errors(expr: dict[str, object], message: str) -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.from_dict({"matchExpressions": [expr]})
    assert str(err.value) == message


_name = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?", fullmatch=True)
_key = st.one_of(
    _name, st.builds(lambda p, n: f"{p}.io/{n}", st.from_regex(r"[a-z]{1,8}", fullmatch=True), _name)
)
_EXACT = st.sampled_from([Op.EQUALS, Op.DOUBLE_EQUALS, Op.NOT_EQUALS])
_requirement = st.one_of(
    st.builds(lambda k, op, v: Requirement.new(k, op, [v]), _key, _EXACT, st.one_of(st.just(""), _name)),
    st.builds(
        Requirement.new, _key, st.sampled_from([Op.IN, Op.NOT_IN]), st.lists(_name, min_size=1, max_size=4)
    ),
    st.builds(Requirement.new, _key, st.sampled_from([Op.EXISTS, Op.DOES_NOT_EXIST])),
)


@given(st.lists(_requirement, max_size=5), st.dictionaries(_key, _name, max_size=5))
def test_string_form_round_trips(reqs: list[Requirement], labels: dict[str, str]) -> None:
    sel = LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))
    again = LabelSelector.parse(str(sel))
    assert again == sel
    assert again.matches(labels) == all(r.matches(labels) for r in reqs)


# --- field selectors ---------------------------------------------------------------------------

POD = {
    "metadata": {"name": "web-1", "namespace": "default"},
    "status": {"phase": "Running"},
    "spec": {"unschedulable": False},
    "involvedObject": {"name": "a=b,c"},
}
SUPPORTED = ["metadata.name", "metadata.namespace", "status.phase", "spec.nodeName", "spec.unschedulable",
             "involvedObject.name"]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("metadata.name=web-1", True),
        ("metadata.name==web-1", True),
        ("metadata.name!=web-1", False),
        ("metadata.name=web-2", False),
        ("metadata.namespace=default,status.phase=Running", True),
        ("metadata.namespace=default,status.phase!=Running", False),
        ("spec.nodeName=", True),
        ("spec.nodeName!=", False),
        ("spec.unschedulable=false", True),
        (r"involvedObject.name=a\=b\,c", True),
    ],
)
def test_field_selector_matches(text: str, matches: bool) -> None:
    assert FieldSelector.parse(text, SUPPORTED).matches(POD) is matches


def test_field_selector_round_trips_escapes() -> None:
    sel = FieldSelector.parse(r"involvedObject.name=a\=b\,c\\d", SUPPORTED)
    assert sel.terms[0].value == "a=b,c\\d"
    assert str(sel) == r"involvedObject.name=a\=b\,c\\d"
    assert FieldSelector.parse(str(sel), SUPPORTED) == sel


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec.foo=bar", "field label not supported: spec.foo"),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("metadata.name=a,x", "invalid selector: 'metadata.name=a,x'; can't understand 'x'"),
        (r"metadata.name=a\q", r"invalid field selector: invalid escape sequence: a\q"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: a=b"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        FieldSelector.parse(text, SUPPORTED)
    assert str(err.value) == message
