"""``syncflow demo``: run kcp, a cluster, Redis and syncflow locally and play one mode's scenario."""

MODES = ("publish", "workload", "edge", "clusters")
"""The scenarios ``syncflow demo --mode`` plays (``syncflow.demo.runner.MODES`` runs them)."""
