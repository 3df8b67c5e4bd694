"""Bootstraps: register a syncer in kcp and write the manifest that runs it next to its cluster.

``syncflow workload sync`` (kcp's ``kubectl kcp workload sync``) and ``syncflow edge bootstrap``
(KubeStellar's ``kubectl kcp workload edge-sync``) share everything here: the syncer's account in the
workspace (``account``), the kubeconfig it gets (``kubeconfig``) and the objects of the physical-cluster
manifest (``manifest``); ``workload`` and ``edge`` say what each mode needs.
"""
