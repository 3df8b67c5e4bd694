"""The devcluster store's list order: every object once, by (namespace, name, cluster), from any position."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from syncflow.devcluster.store import Store

NAMES = st.sampled_from(["a", "b", "b-1", "c", "kube-root-ca.crt"])
NAMESPACES = st.sampled_from(["", "ns", "ns-a", "ns2"])
CLUSTERS = st.sampled_from(["root", "root:a", "x"])
OBJECTS = st.lists(st.tuples(CLUSTERS, NAMESPACES, NAMES), max_size=40)


def _store(objects: list[tuple[str, str, str]], removed: list[tuple[str, str, str]]) -> Store:
    store = Store()
    for cluster, namespace, name in objects:
        store.put(cluster, "", "configmaps", {"metadata": {"namespace": namespace, "name": name}}, None)
    for cluster, namespace, name in removed:
        store.remove(cluster, "", "configmaps", {"metadata": {"namespace": namespace, "name": name}})
    return store


def _positions(store: Store, *args: object) -> list[tuple[str, str, str]]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"], c) for c, o in store.ordered(*args)]  # type: ignore[arg-type]


@given(OBJECTS, OBJECTS, st.one_of(st.none(), CLUSTERS), st.one_of(st.none(), NAMESPACES))
def test_ordered_is_sorted_and_complete(
    objects: list[tuple[str, str, str]],
    removed: list[tuple[str, str, str]],
    cluster: str | None,
    namespace: str | None,
) -> None:
    kept = set(objects) - set(removed)
    expected = sorted(
        (ns, name, c)
        for c, ns, name in kept
        if (cluster is None or c == cluster) and (namespace is None or ns == namespace)
    )
    store = _store(objects, removed)
    assert _positions(store, cluster, "", "configmaps", namespace) == expected
    assert sorted(c for c, _ in store.items(cluster, "", "configmaps", namespace)) == sorted(
        p[2] for p in expected
    )
    if namespace is not None and cluster is not None:
        assert store.count(cluster, "", "configmaps", namespace) == len(expected)


@given(OBJECTS, st.tuples(NAMESPACES, NAMES, CLUSTERS), st.one_of(st.none(), NAMESPACES))
def test_ordered_continues_after_any_position(
    objects: list[tuple[str, str, str]], after: tuple[str, str, str], namespace: str | None
) -> None:
    expected = sorted(
        (ns, name, c) for c, ns, name in set(objects) if (ns, name, c) > after and namespace in (None, ns)
    )
    assert _positions(_store(objects, []), None, "", "configmaps", namespace, after) == expected


def test_a_removed_resource_leaves_nothing_behind() -> None:
    store = _store([("root", "ns", "a")], [("root", "ns", "a")])
    assert (
        list(store.ordered(None, "", "configmaps")) == []
        and list(store.items("root", "", "configmaps")) == []
    )
