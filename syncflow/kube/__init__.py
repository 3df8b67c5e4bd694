"""Kubernetes plumbing: clients per endpoint, kcp paths, the list+watch loop and leader election."""
