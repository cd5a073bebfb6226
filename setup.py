"""Package discovery only (metadata lives in pyproject.toml).

The design card's top-level folders are installed under the project's namespace, never as
generic top-level names: tui/ -> macaron_local.tui, models/ -> macaron_local.bundled.models,
hcp_profiles/ -> macaron_local.bundled.hcp_profiles, plugins/ -> macaron_local.bundled.plugins.
"""

from setuptools import find_packages, setup

MAPPED = {
    "macaron_local.tui": "tui",
    "macaron_local.bundled.models": "models",
    "macaron_local.bundled.hcp_profiles": "hcp_profiles",
    "macaron_local.bundled.plugins": "plugins",
}


def mapped_packages() -> list[str]:
    out = []
    for name, folder in MAPPED.items():
        for sub in find_packages(where=".", include=[folder, f"{folder}.*"]):
            out.append(name + sub[len(folder) :])
    return out


setup(
    packages=find_packages(include=["macaron_local", "macaron_local.*"]) + mapped_packages(),
    package_dir=MAPPED,
)
