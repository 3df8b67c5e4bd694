"""The Celery application's pieces below ``syncflow.tasks`` (the app module itself, kept there for
``celery -A syncflow.tasks``): the beat schedule (``schedule``) and the configured mode's hooks
(``modes``), found by name so that nothing here imports a mode's package.

May import the engine, the queue and everything below them; never ``runtime``, ``cli``, ``demo`` or
``devcluster``.
"""
