#!/bin/bash
# `make demo`: show a sandbox from the inside, as root and, if the test user
# exists, as an unprivileged user.
set -u
CL=$(cd "$(dirname "$0")/.." && pwd)/build/cloister
show() { echo; echo "\$ $*"; "$@"; echo "(exit $?)"; }
show "$CL" run -- sh -c 'echo "inside: uid=$(id -u) pid=$$ host=$(hostname)"; ls /; grep -E "^Cap(Eff|Bnd)|NoNewPrivs" /proc/self/status; cat /proc/net/dev | tail -n +3 | cut -d: -f1'
show "$CL" run -- sh -c 'touch /usr/x'
show "$CL" run --timeout 1 -- sleep 10
show "$CL" check
if [ "$(id -u)" = 0 ] && id cloister-test >/dev/null 2>&1; then
	tmp=$(mktemp -d); cp "$CL" "$tmp/"; chmod -R a+rX "$tmp"
	echo; echo "# as the unprivileged user cloister-test:"
	runuser -u cloister-test -- "$tmp/cloister" run --uid 0 -- sh -c 'echo "inside: uid=$(id -u)"; cat /proc/self/uid_map'
	rm -rf "$tmp"
fi
