#!/usr/bin/env bash
# Install the .desktop launcher (opens `macaron` in a terminal) for the current user.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
mkdir -p "$dest"
install -m 0644 "$here/macaron.desktop" "$dest/macaron.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database "$dest" || true
echo "installed $dest/macaron.desktop"
