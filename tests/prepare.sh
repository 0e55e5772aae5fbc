#!/bin/bash
# What the suites fetch or install once, made before tests/run.sh starts its
# two passes (the unprivileged pass runs beside the root pass, on a copy of
# the build dir made at its start, so it cannot wait for the root pass to
# make these): bubblewrap's source package and its helper (build/upstream),
# the real bwrap clients from npm (build/clients/npm) and the Smithers
# packages (build/smithers). Each step is cached and a no-op when current.
#   tests/prepare.sh [FILTER]   (the same extended regex as tests/run.sh)
# Prints one line per step; a failed step is reported here and again by
# its suite (which retries as root, and fails by name as the user).
# .ci/run starts it beside the ASan pass, which needs none of it.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
FILTER=${1:-}
rc=0
step() {  # suite, command...
	local suite=$1 t=$SECONDS out; shift
	[ -n "$FILTER" ] && ! [[ $suite =~ $FILTER ]] && return 0
	if out=$("$@" 2>&1); then
		echo "prepare: $suite ready ($((SECONDS - t)) s)"
	else
		echo "prepare: $suite: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
		rc=1
	fi
}
step tests/bwrap/upstream.sh env CLOISTER_PREPARE=1 bash tests/bwrap/upstream.sh
step tests/bwrap/clients.sh bash tests/bwrap/clients/install.bash "$TOP/build/clients/npm"
step tests/integration/smithers_provider.sh env CLOISTER_PREPARE=1 bash tests/integration/smithers_provider.sh
exit $rc
