"""Bundled data folders (models/, hcp_profiles/, plugins/) mapped into the package."""
