"""Bundled hcp_profiles, shipped in the wheel as macaron_local.bundled.hcp_profiles (data only)."""
