"""Related objects (api-syncagent's ``spec.related``): objects that belong to a primary object, found
on their origin side and copied to the other side by ``related/<rule>/<cluster>/<namespace>/<name>``
keys, one per primary.

``resolve`` finds them and names their copies, ``copies`` syncs one object to its copy, ``reconcile``
is the key's body (and the cleanup when the primary goes), ``index`` remembers in Redis which
primaries an object concerns, and ``watches`` maps events on related resources to keys.
"""
