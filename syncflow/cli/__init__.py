"""The ``syncflow`` command line (the console script ``syncflow.cli:main``): the command group in
``commands`` (commands parse their arguments and delegate) and ``extras`` (which optional extra a command
lacks).

The top layer: it may import every other syncflow package; nothing in syncflow imports it.
"""

from syncflow.cli.commands import main

__all__ = ["main"]
