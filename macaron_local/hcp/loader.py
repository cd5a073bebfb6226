"""Finding, reading, layering and validating HCP profiles.

Owns: where profiles live (bundled ``hcp_profiles/`` in the wheel, then the user's
``<config>/profiles/``, which override a bundled profile of the same name or ``extends`` one with
a deep merge), TOML parsing with file and line in errors, running schema upgrades before
validation, and turning every failure into a :class:`ContractError` naming the file and the
line or field. A profile is returned whole or not at all. Must not: open the store, cache
profiles across calls (the watcher reloads on purpose), or load model weights.
"""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from macaron_local import paths
from macaron_local.errors import ContractError
from macaron_local.hcp.checks import check_references
from macaron_local.hcp.schema import NAME_RE, Profile
from macaron_local.hcp.upgrades import upgrade

Origin = Literal["bundled", "user", "file"]
_TOML_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "float",
    "bool": "boolean",
    "dict": "table",
    "list": "array",
    "datetime": "datetime",
    "date": "date",
    "time": "time",
}


@dataclass(frozen=True)
class ProfileEntry:
    """A profile file found on disk (not yet validated)."""

    name: str
    path: Path
    origin: Origin
    overrides_bundled: bool = False


def bundled_dir() -> Path:
    return paths.bundled("hcp_profiles")


def user_dir() -> Path:
    """``<config>/profiles``: user profiles; not created here."""
    return paths.config_dir() / "profiles"


def list_profiles() -> list[ProfileEntry]:
    """Every profile name with the file that wins for it (a user file beats a bundled one)."""
    bundled = {p.stem: p for p in _tomls(bundled_dir())}
    found = {name: ProfileEntry(name, path, "bundled") for name, path in bundled.items()}
    for path in _tomls(user_dir()):
        found[path.stem] = ProfileEntry(path.stem, path, "user", path.stem in bundled)
    return [found[name] for name in sorted(found)]


def _tomls(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.toml") if re.match(NAME_RE, p.stem))


def find_profile(name: str, *, bundled_only: bool = False) -> Path:
    """The file of profile ``name``: the user's first, then the bundled one."""
    if not re.match(NAME_RE, name):
        raise ContractError(
            f"{name!r} is not a profile name (lower-case letters, digits, '.', '_', '-')"
        )
    folders = [bundled_dir()] if bundled_only else [user_dir(), bundled_dir()]
    for folder in folders:
        path = folder / f"{name}.toml"
        if path.is_file():
            return path
        if path.is_symlink() or path.exists():  # there, but not a file: say so, do not skip it
            what = "a directory" if path.is_dir() else "a broken symlink or a symlink loop"
            raise ContractError(
                f"{path} is {what}, not a profile file",
                path=path,
                hint="replace it with a .toml file or remove it",
            )
    known = ", ".join(e.name for e in list_profiles()) or "none"
    raise ContractError(f"no profile named {name!r} (available: {known})", where=name)


def load_profile(name_or_path: str | Path, *, known_revisions: set[str] | None = None) -> Profile:
    """Load, resolve (``extends``), upgrade and validate a profile by name or file path.

    ``known_revisions``: the adapter revision hashes the lineage store knows; when given, a
    64-hex revision not in it is refused. Raises :class:`ContractError` on any problem.
    """
    path = _locate(name_or_path)
    return load_file(path, known_revisions=known_revisions)


def load_bundled(name: str) -> Profile:
    """The bundled profile ``name`` exactly as shipped (ignores user overrides)."""
    return load_file(find_profile(name, bundled_only=True))


def load_file(path: Path, *, known_revisions: set[str] | None = None) -> Profile:
    """Load the profile in ``path`` (its ``extends`` are resolved by name)."""
    doc = resolve_doc(path)
    profile = _validate(doc, path)
    try:
        check_references(profile, known_revisions=known_revisions)
    except ContractError as exc:
        raise _at(exc, path) from exc
    profile._source = path
    return profile


def _locate(ref: str | Path) -> Path:
    text = str(ref)
    if isinstance(ref, Path) or "/" in text or "\\" in text or text.endswith(".toml"):
        path = Path(text).expanduser()
        if not path.is_file():
            raise ContractError("no such profile file", path=path)
        return path
    return find_profile(text)


def read_doc(path: Path) -> dict[str, Any]:
    """Parse one TOML file; syntax errors name the file and the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"not UTF-8 text: {exc.reason}", path=path) from exc
    except OSError as exc:
        raise ContractError(f"cannot read the file: {exc.strerror or exc}", path=path) from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"at line (\d+)(?:, column (\d+))?", str(exc))
        where = f"line {match.group(1)}" if match else None
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        raise ContractError(f"malformed TOML: {reason}", path=path, where=where) from exc
    except RecursionError as exc:
        raise ContractError("malformed TOML: nested too deeply", path=path) from exc


def resolve_doc(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The upgraded document of ``path`` with its ``extends`` chain deep-merged under it."""
    if path.resolve() in _seen:
        chain = " -> ".join(p.stem for p in (*_seen, path.resolve()))
        raise ContractError(f"extends cycle: {chain}", path=path, where="extends")
    try:
        doc = upgrade(read_doc(path))
    except ContractError as exc:
        raise _at(exc, path) from exc
    parent_name = doc.get("extends")
    if parent_name is None:
        return doc
    if not isinstance(parent_name, str):
        raise ContractError(
            f"extends must be a profile name (string), got {_toml_type(parent_name)}",
            path=path,
            where="extends",
        )
    try:
        parent_path = find_parent(path, parent_name)
    except ContractError as exc:
        raise ContractError(exc.message, path=path, where="extends") from exc
    parent = resolve_doc(parent_path, (*_seen, path.resolve()))
    return deep_merge(parent, doc)


def find_parent(child: Path | None, parent: str) -> Path:
    """The file that ``extends = parent`` written in ``child`` refers to.

    Bundled profiles extend bundled ones only (a user file never changes a shipped profile),
    and a user file extending its own name (``tall-local.toml`` extends ``tall-local``) gets
    the bundled one; otherwise user profiles come first, as for :func:`find_profile`.
    """
    only_bundled = child is not None and (
        child.resolve().parent == bundled_dir().resolve() or child.stem == parent
    )
    return find_profile(parent, bundled_only=only_bundled)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value in ``over`` replaces the one in ``base``."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _validate(doc: dict[str, Any], path: Path) -> Profile:
    try:
        profile = Profile.model_validate(doc)
    except ValidationError as exc:
        raise _from_validation(exc, path) from exc
    except ContractError as exc:  # the schema's own cross-field checks
        raise _at(exc, path) from exc
    folder = path.resolve().parent
    if folder in (bundled_dir().resolve(), user_dir().resolve()) and profile.id != path.stem:
        raise ContractError(
            f"profile.id is {profile.id!r} but the file is named {path.name!r}; "
            "profiles in the profile folders are named after their id",
            path=path,
            where="profile.id",
            hint=f'set id = "{path.stem}" under [profile]',
        )
    return profile


def _from_validation(exc: ValidationError, path: Path) -> ContractError:
    errors = exc.errors(include_url=False)
    lines = [f"{_loc(e['loc'])}: {_describe(e)}" for e in errors]
    first = errors[0]
    message = _describe(first)
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more: " + "; ".join(lines[1:6]) + ")"
    return ContractError(message, path=path, where=_loc(first["loc"]) or None)


def _describe(err: ErrorDetails) -> str:
    loc = err["loc"]
    if err["type"] == "extra_forbidden":
        return f"unknown key {loc[-1]!r}"
    if err["type"] == "missing":
        return f"required key {loc[-1]!r} is missing"
    return f"{err['msg']} (got {_toml_type(err.get('input'))})"


def _loc(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _toml_type(value: object) -> str:
    name = type(value).__name__
    return _TOML_TYPES.get(name, name)


def _at(exc: ContractError, path: Path) -> ContractError:
    """The same error, pinned to ``path`` unless it already names a file."""
    if exc.path is not None:
        return exc
    err = type(exc)(exc.message, path=path, where=exc.where, hint=exc.hint)
    return err
