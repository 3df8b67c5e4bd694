"""api-syncagent's ``spec.mutation``: one module per kind (``delete``, ``regex``, ``template``, ``cel``)
behind :class:`~syncflow.mutation.base.Transformer`, paths in :mod:`.paths`, and
:func:`~syncflow.mutation.mutator.compiled` steps of one direction, run in order.

Pure functions of the object and the other side's object; the sync engine decides when to run them.

Below the engine and the API types (``syncflow.api`` validates a PublishedResource's mutations with
it): may import only ``templating``, ``gocompat`` and ``util``.
"""
