#!/bin/bash
# Installs the real bwrap clients tests/bwrap/clients.sh drives, pinned, from
# the npm registry, into DIR (default build/clients/npm), once: a later call
# with the same pins does nothing. Prints DIR on success.
#   Codex CLI (`codex sandbox`), @anthropic-ai/sandbox-runtime (`srt`),
#   Smithers' sandbox package (its bubblewrap runtime) and bun to run it.
# smithers-orchestrator itself is not installed: its 0.32.0 dependency tree
# names a version npm does not have (@tanstack/electric-db-collection@0.3.11);
# @smithers-orchestrator/sandbox@0.32.0 is the package holding the
# bubblewrap runtime it uses (same code).
set -eu
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
DIR=${1:-$TOP/build/clients/npm}
PINS='"@openai/codex": "0.171.0",
    "@anthropic-ai/sandbox-runtime": "0.0.83",
    "@smithers-orchestrator/sandbox": "0.32.0",
    "bun": "1.4.5"'
manifest() {
	printf '{\n  "name": "cloister-bwrap-clients",\n  "private": true,\n  "dependencies": {\n    %s\n  }\n}\n' "$PINS"
}
if [ -f "$DIR/.installed" ] && [ "$(cat "$DIR/.installed")" = "$(manifest)" ]; then
	echo "$DIR"; exit 0
fi
command -v npm >/dev/null || { echo "npm is missing (Debian: apt-get install nodejs npm)" >&2; exit 1; }
rm -rf "$DIR"; mkdir -p "$DIR"
manifest >"$DIR/package.json"
# The cache stays beside the install (build dir), not in the caller's home.
if ! (cd "$DIR" && npm install --no-audit --no-fund --no-update-notifier --save-exact \
	--cache "$DIR/../npm-cache" >"$DIR/../npm-install.log" 2>&1); then
	tail -5 "$DIR/../npm-install.log" >&2
	echo "npm install of the pinned clients failed (log: $DIR/../npm-install.log)" >&2
	exit 1
fi
manifest >"$DIR/.installed"
echo "$DIR"
