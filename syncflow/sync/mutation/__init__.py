"""api-syncagent's ``spec.mutation``: one module per kind (``delete``, ``regex``, ``template``, ``cel``)
behind :class:`~syncflow.sync.mutation.base.Transformer`, paths in :mod:`.paths`, and
:func:`~syncflow.sync.mutation.mutator.compiled` steps of one direction, run in order.

Pure functions of the object and the other side's object; the sync engine decides when to run them.
"""
