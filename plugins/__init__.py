"""Bundled plugins, shipped in the wheel as macaron_local.bundled.plugins (data only)."""
