"""api-syncagent's ``spec.mutation``: one module per kind (``delete``, ``regex``, ``template``, ``cel``)
behind :class:`~syncflow.sync.mutation.base.Transformer`, paths in :mod:`.paths`, and
:class:`~syncflow.sync.mutation.mutator.Mutator` running a ``ResourceMutationSpec`` in order.

Pure functions of the object and the other side's object; the sync engine decides when to run them.
"""
