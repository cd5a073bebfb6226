"""``macaron serve``: the command that starts the OpenAI-compatible server.

Owns checking the bind (a token beyond loopback), validating the profile before anything is
bound, binding the socket (``--port 0`` picks a free one; the address is printed on stdout),
and running uvicorn until interrupted. Imports the server stack only when the command runs.
"""

from __future__ import annotations

import signal
import socket
import sys

import click

from macaron_local.cli import edge
from macaron_local.errors import MacaronError
from macaron_local.serve.settings import ServeSettings, check_bind, is_loopback, resolve_token


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8723,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free port; the address is printed).",
)
@click.option("--profile", default=None, help="Harness profile (default: tall-local).")
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Turns handed to the runtime at once.",
)
@click.option(
    "--queue",
    "queue_size",
    default=32,
    show_default=True,
    type=click.IntRange(0, 4096),
    help="Requests that may wait; beyond: 429.",
)
@click.option(
    "--max-body-bytes",
    default=8 << 20,
    show_default=True,
    type=click.IntRange(1024, 1 << 30),
    help="Largest request body; beyond: 413.",
)
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@edge
def serve(
    host: str,
    port: int,
    profile: str | None,
    concurrency: int,
    queue_size: int,
    max_body_bytes: int,
    log_level: str,
) -> None:
    """Serve the assistant as an OpenAI-compatible API (docs/api.md).

    A bearer token (MACARON_SERVE_TOKEN, or the keyring entry macaron-local/serve-token) is
    required to listen beyond loopback, and enforced whenever one is set.
    """
    settings = ServeSettings(
        host=host,
        port=port,
        profile=profile,
        token=resolve_token(),
        concurrency=concurrency,
        queue=queue_size,
        max_body_bytes=max_body_bytes,
    )
    check_bind(settings)
    _check_profile(profile)
    sys.exit(run_server(settings, log_level=log_level))


def _check_profile(profile: str | None) -> None:
    """Fail before binding when the profile is invalid or its base is not published."""
    from macaron_local.hcp import load_profile, require_published_base
    from macaron_local.turns.pipeline import DEFAULT_PROFILE

    require_published_base(load_profile(profile or DEFAULT_PROFILE))


def run_server(settings: ServeSettings, *, log_level: str = "warning") -> int:
    """Bind, print the address, serve until SIGINT/SIGTERM; the exit code (1: load failed)."""
    import uvicorn

    from macaron_local.serve.app import make_app
    from macaron_local.serve.runtime import open_runtime

    sock = _bind(settings.host, settings.port)
    failed: list[BaseException] = []
    server: uvicorn.Server | None = None

    def on_load_error(exc: BaseException) -> None:
        failed.append(exc)
        click.echo(f"error: the model could not be loaded: {exc}", err=True)
        if isinstance(exc, MacaronError) and exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        if server is not None:
            server.should_exit = True

    app = make_app(settings, lambda: open_runtime(settings.profile), on_load_error=on_load_error)
    config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    auth = "bearer token required" if settings.token else "no token (loopback only)"
    click.echo(
        f"macaron serve: listening on http://{shown}:{bound_port} ({auth}); "
        "/health says when the model is loaded",
    )
    sys.stdout.flush()
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal: that is a
    # clean stop, not an error
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(1 if failed else 0))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 1 if failed else 0


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise MacaronError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="pick another --port (0 picks a free one)"
            if is_loopback(host)
            else "check the address belongs to this machine",
        ) from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
