"""Bundled models, shipped in the wheel as macaron_local.bundled.models (data only)."""
