"""Small helpers with no syncflow dependencies of their own: text caps (``truncate``), structured
logging (``logs``), Kubernetes name and selector syntax (``names``, ``selectors``), JSON deep copies
(``jsonvalues``), request deadlines (``deadline``), error descriptions (``neterrors``), state paths
(``paths``) and a ``/healthz``/``/readyz`` server (``health``).

The bottom layer: may import only ``syncflow.gocompat`` and itself (and third-party libraries).
"""
