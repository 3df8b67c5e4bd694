"""The Celery application's pieces below ``syncflow.tasks`` (the app module itself, kept there for
``celery -A syncflow.tasks``): the beat schedule (``schedule``), what a mode is (``mode``) and the
registry of modes with the configured mode's hooks (``modes``), imported by path on first use so that
nothing here imports a mode's package.

May import the engine, the queue and everything below them; never ``runtime``, ``cli``, ``demo`` or
``devcluster``.
"""
