"""Simulated controllers, kwok-style: what kube-controller-manager, the scheduler and kubelets would do.

Started by ``syncflow devcluster`` unless ``--no-simulate``; see docs/devcluster.md.
"""
