#!/usr/bin/env bash
# Install shell completion for `macaron` (click's completion: _MACARON_COMPLETE=<shell>_source).
# Usage: packaging/install-completion.sh [bash|zsh|fish]   (default: the current $SHELL)
# Writes one file for the user, nothing system-wide; re-run after upgrading macaron-local.
set -euo pipefail
shell="${1:-$(basename "${SHELL:-bash}")}"
command -v macaron >/dev/null || { echo "macaron is not on PATH (pipx install first)" >&2; exit 2; }
case "$shell" in
  bash)
    dir="${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions"
    mkdir -p "$dir" && _MACARON_COMPLETE=bash_source macaron > "$dir/macaron" ;;
  zsh)
    dir="${ZDOTDIR:-$HOME}/.zfunc"
    mkdir -p "$dir" && _MACARON_COMPLETE=zsh_source macaron > "$dir/_macaron"
    echo "add to ~/.zshrc (before compinit): fpath+=($dir)" ;;
  fish)
    dir="${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions"
    mkdir -p "$dir" && _MACARON_COMPLETE=fish_source macaron > "$dir/macaron.fish" ;;
  *) echo "unsupported shell: $shell (bash, zsh or fish)" >&2; exit 2 ;;
esac
echo "completion for $shell installed in $dir"
