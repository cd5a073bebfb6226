"""``python -m macaron_local.serve`` runs ``macaron serve`` (same options)."""

from macaron_local.serve.cli import serve

if __name__ == "__main__":
    serve(prog_name="macaron serve")
