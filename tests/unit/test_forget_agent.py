"""Forgetting an agent removes every Redis key it has (prefix and hash-tagged structures), and only its."""

from __future__ import annotations

import fakeredis

from syncflow.queue.layout import QueueLayout, agent_prefix, budget_key, forget_agent


def test_every_key_of_the_agent_goes_and_no_other() -> None:
    redis = fakeredis.FakeRedis()
    for agent in ("shop", "shop2"):
        redis.set(f"{agent_prefix(agent)}watch:bookmark", "1")
        redis.sadd(QueueLayout(agent, "sync").key("D"), "sync/a/b/c/d")
        redis.set(budget_key(agent, "kcp"), "10")
    redis.set("unrelated", "1")

    assert forget_agent(redis, "shop") == 3

    assert sorted(k.decode() for k in redis.scan_iter()) == sorted(
        [
            f"{agent_prefix('shop2')}watch:bookmark",
            QueueLayout("shop2", "sync").key("D"),
            budget_key("shop2", "kcp"),
            "unrelated",
        ]
    )
