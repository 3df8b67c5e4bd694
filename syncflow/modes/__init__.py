"""Sync modes: each turns its own API objects into sync rules for the engine (DESIGN §1)."""
