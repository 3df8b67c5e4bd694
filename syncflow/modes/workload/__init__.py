"""Workload mode (the TMC workload syncer): one SyncTarget in a kcp workspace, one physical cluster."""
