"""devcluster's checked-in catalogue of built-in resources is exactly what its generator derives from the
official client and the 1.32 listing, so neither can drift from the other unnoticed (issue 10 item 1)."""

from __future__ import annotations

import json

from syncflow.devcluster.builtins import generate
from syncflow.devcluster.builtins.listing import KUBE_132_LISTING, parse


def test_the_checked_in_catalogue_is_what_the_generator_writes() -> None:
    entries = generate.catalogue(parse(KUBE_132_LISTING.read_text()))
    assert json.dumps(entries, indent=1) + "\n" == generate.OUTPUT.read_text()


def test_the_catalogue_serves_every_resource_of_the_listing() -> None:
    rows = parse(KUBE_132_LISTING.read_text())
    served = {(entry["group"], entry["plural"]) for entry in json.loads(generate.OUTPUT.read_text())}
    assert {(row.group, row.name) for row in rows} == served
