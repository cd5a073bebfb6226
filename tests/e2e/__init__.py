"""End-to-end tests in a real terminal."""
