"""One rule for the remote endpoint, used by turns, ``doctor`` and the app: the profile's
``endpoint``, else its ``endpoint_env`` variable, else ``$MACARON_REMOTE_URL``. (``doctor``'s
check used to skip the last, and said "not configured" while turns went remote.)"""

from __future__ import annotations

from macaron_local.hcp import load_profile
from macaron_local.remote import RemoteHook

URL = "http://127.0.0.1:9"
ENV = {"MACARON_REMOTE_URL": URL}


def test_the_default_variable_is_the_last_resort_for_everyone() -> None:
    hybrid = load_profile("hybrid")
    rem = hybrid.remote.model_copy(update={"endpoint_env": "VENTI_URL"})
    prof = hybrid.model_copy(update={"remote": rem})
    assert rem.resolved_endpoint(ENV) == URL == RemoteHook(prof, environ=ENV).endpoint()
    named = {**ENV, "VENTI_URL": "http://127.0.0.1:10"}
    assert rem.resolved_endpoint(named) == "http://127.0.0.1:10"
    pinned = rem.model_copy(update={"endpoint": "https://venti.example"})
    assert pinned.resolved_endpoint(named) == "https://venti.example"


def test_a_disabled_remote_resolves_only_when_forced() -> None:
    local = load_profile("tall-local")
    assert local.remote.resolved_endpoint(ENV) is None
    assert local.remote.resolved_endpoint(ENV, forced=True) == URL
    hook = RemoteHook(local, environ=ENV)
    assert hook.endpoint() is None and hook.endpoint(forced=True) == URL
