"""Clusters mode (kcp's multi-cluster prototype): Cluster objects in a kcp workspace, one syncflow for all."""
