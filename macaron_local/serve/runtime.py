"""Opening the runtime the server drives: the profile's engine, metered for ``usage``.

Builds the same engine :meth:`Runtime.open` would (verified base, the profile's resources) as a
:class:`~macaron_local.serve.metered.MeteredEngine`, then hands it to ``Runtime.open`` which
does the rest (approval gate, recovery, adapters), and starts hot reload of the profile and the
plugins. Must not: serve anything.
"""

from __future__ import annotations

from pathlib import Path

from macaron_local.hcp import load_profile
from macaron_local.manifests import get_manifest, verified_path
from macaron_local.serve.metered import MeteredEngine
from macaron_local.turns.pipeline import DEFAULT_PROFILE, Runtime, engine_config


def open_runtime(profile: str | None = None, *, db_path: Path | None = None) -> Runtime:
    prof = load_profile(profile or DEFAULT_PROFILE)
    manifest = get_manifest(prof.base.model)
    engine = MeteredEngine(  # every [resources] setting, as the app's engine gets them
        verified_path(prof.base.model),
        engine_config(prof.resources, len(prof.labels)),
        base_sha256=manifest.sha256,
    )
    try:
        runtime = Runtime.open(profile or DEFAULT_PROFILE, db_path=db_path, engine=engine)
    except BaseException:
        engine.close()
        raise
    runtime.watch()  # a saved profile or plugin is live for the next request (log + /health)
    return runtime
