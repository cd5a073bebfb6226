"""Tests of the terminal app."""
