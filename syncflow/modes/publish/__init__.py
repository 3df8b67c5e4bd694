"""Publish mode (api-syncagent compatible): PublishedResources → APIResourceSchemas → one APIExport."""
