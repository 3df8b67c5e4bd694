"""Bootstraps: register a syncer in kcp and write the manifest that runs it next to its cluster.

``syncflow workload sync`` (kcp's ``kubectl kcp workload sync``) and ``syncflow edge bootstrap``
(KubeStellar's ``kubectl kcp workload edge-sync``) share everything here: the syncer's account in the
workspace (``account``), the kubeconfig it gets (``kubeconfig``) and the objects of the physical-cluster
manifest (``manifest``). What each mode needs is in its own package
(``syncflow.modes.workload.bootstrap``, ``syncflow.modes.edge.bootstrap``,
``syncflow.modes.clusters.manifest``).

May import ``api``, ``kube``, the engine's discovery, ``config`` and ``util``; never ``modes`` (the
modes import it), ``tasks``, ``runtime``, ``cli``, ``demo`` or ``devcluster``.
"""
