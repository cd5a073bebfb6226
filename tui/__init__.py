"""The Textual app. Imports the runtime through macaron_local.__all__; the runtime never imports it."""
