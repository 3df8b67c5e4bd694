"""Starting and running syncflow's processes: the settings' command-line flags (``cliopts``), the
all-in-one agents' shared flags and roles (``agentcli``), start-up checks (``preflight``), the
all-in-one supervisor (``supervisor``), and a worker's ``/metrics`` and health server
(``worker_health``).

May import the app (``syncflow.tasks``, ``syncflow.app``), bootstrap, the engine, the queue and
everything below them; never the modes' packages (a mode is found by name), ``cli``, ``demo`` or
``devcluster``.
"""
