"""Kubernetes 1.32's built-in resource types: the generated catalogue and how it is made."""
