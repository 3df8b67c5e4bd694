"""Go's behaviour where users or Go programs expect it: ``regexp`` on RE2 (``goregexp``),
``encoding/json``'s exact output (``gojson``) and Go durations (``durations``).

The bottom layer: imports nothing else of syncflow.
"""
