"""Pydantic models of the APIs syncflow accepts, and the CRDs generated from them."""
