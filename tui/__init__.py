"""The Textual app (installed as macaron_local.tui); the runtime never imports it.

It reaches the runtime only through ``macaron_local.facade``.
"""
