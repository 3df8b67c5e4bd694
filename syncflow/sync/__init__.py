"""The sync engine: desired-state building, naming, merge, apply, status, related objects, deletion."""
