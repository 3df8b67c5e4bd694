"""The SyncTarget model reads kcp's JSON field names, as seed-style manifests write them."""

from __future__ import annotations

import pytest

from syncflow.api import crdgen, synctarget
from tests.support.synctargets import SEED_SYNC_TARGET as SEED


def test_seed_manifest_parses_and_round_trips() -> None:
    target = synctarget.SyncTarget.parse(SEED)
    assert target.spec.supported_api_exports is not None
    assert target.spec.supported_api_exports[0].resource == "apps/v1/deployments"
    assert target.model_dump(exclude_none=True)["spec"] == SEED["spec"]


def test_camel_cased_acronym_is_not_kcps_field() -> None:
    wrong = {**SEED, "spec": {"supportedApiExports": [{"export": "kubernetes"}]}}
    with pytest.raises(synctarget.SyncTargetError, match="supportedApiExports"):
        synctarget.SyncTarget.parse(wrong)


def test_crd_spec_has_kcps_field_names() -> None:
    schema = crdgen.crd(synctarget.API_TYPE)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "supportedAPIExports" in schema["properties"]["spec"]["properties"]
