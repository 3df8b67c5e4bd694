"""Every template function against vectors that Go's text/template + sprig rendered (tests/vectors/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from syncflow.templating import TemplateError, compile_template

_HERE = Path(__file__).parent.parent / "vectors" / "templates"
_CASES = json.loads((_HERE / "cases.json").read_text())
_VECTORS: list[dict[str, Any]] = json.loads((_HERE / "vectors.json").read_text())
_DIVERGES = {
    # Go decodes object integers as int64 and template constants as int; reflect.DeepEqual tells them
    # apart. syncflow has one integer type, so has/without find a constant in object data.
    "without has compact concat": "object integers are int64 in Go, constants int",
}


def test_every_case_has_a_vector() -> None:
    assert [c["template"] for c in _CASES["cases"]] == [v["template"] for v in _VECTORS]


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, marks=pytest.mark.xfail(reason=_DIVERGES[v["name"]], strict=True))
        if v["name"] in _DIVERGES
        else v
        for v in _VECTORS
    ],
    ids=[v["name"] for v in _VECTORS],
)
def test_renders_as_go(vector: dict[str, Any]) -> None:
    def render() -> str:
        template = compile_template(vector["template"], html=vector.get("html", False))
        return template.render(json.loads(json.dumps(_CASES["data"])))

    if "error" in vector:
        with pytest.raises(TemplateError):
            render()
    else:
        assert render() == vector["output"]
