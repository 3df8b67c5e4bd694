"""``syncflow demo``: the whole publish-mode system on one machine, with a guided scenario."""
