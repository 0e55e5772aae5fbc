#!/bin/bash
# Runs bubblewrap's own test scripts (Debian bookworm's source package,
# fetched once into build/upstream/) against Debian's /usr/bin/bwrap and
# against cloister's bwrap entry, and passes a script when both agree.
#   tests/bwrap/upstream.sh [SCRIPT...]
# A script's result is its exit status plus its TAP lines ("ok - name",
# "ok # SKIP reason"); cloister passes when that result equals bwrap's on
# the same host as the same user. UPSTREAM_DIR overrides the cache (it
# must be writable on the first run), UPSTREAM_MIRROR the Debian mirror
# (default: the host's). UPSTREAM_KEEP=1 keeps the logs.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$TOP/tests/lib.sh"
TFILE=upstream
UP=${UPSTREAM_DIR:-$TOP/build/upstream}
BW=${BWRAP_REF:-/usr/bin/bwrap}
PKG=bubblewrap
SCRIPTS=(test-run.sh test-seccomp.py test-specifying-pidns.sh test-specifying-userns.sh)
[ $# -gt 0 ] && SCRIPTS=("$@")
# Bounds: the fetch and each script run end by these deadlines however
# slow the mirror or the machine.
FETCH_TIMEOUT=${UPSTREAM_FETCH_TIMEOUT:-300}
SCRIPT_TIMEOUT=${UPSTREAM_SCRIPT_TIMEOUT:-300}

# The host's Debian mirror and release, read (never written) from its apt
# configuration, so the private list asks the same mirror for sources.
host_mirror() {
	local f u
	[ -n "${UPSTREAM_MIRROR:-}" ] && { echo "$UPSTREAM_MIRROR"; return; }
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		u=$(grep -Eo 'https?://[^ ]*/debian/?( |$)' "$f" | grep -v security | head -n1 | tr -d ' ')
		[ -n "$u" ] && { echo "${u%/}"; return; }
	done
	echo http://deb.debian.org/debian
}
host_suite() {
	local c
	c=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	echo "${c:-bookworm}"
}

# apt-get with a private source list, lists and cache under $UP/apt: the
# host's apt state is neither read for sources nor changed.
papt() {
	local a=$UP/apt
	timeout "$FETCH_TIMEOUT" apt-get -q -o APT::Update::Error-Mode=any \
		-o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" \
		-o Dir::State::status=/var/lib/dpkg/status \
		-o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" \
		-o Acquire::Retries=2 -o Acquire::http::Timeout=60 "$@"
}

# Downloads and unpacks the source package into $UP/src once; later runs
# reuse it.
fetch() {
	local a=$UP/apt d
	[ -f "$UP/src/tests/test-run.sh" ] && return 0
	command -v dpkg-source >/dev/null || { echo "dpkg-source missing: apt-get install dpkg-dev"; return 1; }
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$UP/dl" || return 1
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(host_mirror) $(host_suite) main" \
		>"$a/sources.list"
	papt update >"$UP/fetch.log" 2>&1 || { echo "apt-get update (private list) failed:"; tail -n 5 "$UP/fetch.log"; return 1; }
	(cd "$UP/dl" && papt source --download-only "$PKG") >>"$UP/fetch.log" 2>&1 ||
		{ echo "apt-get source $PKG failed (mirror $(host_mirror) unreachable?):"; tail -n 5 "$UP/fetch.log"; return 1; }
	d=$(mktemp -d "$UP/unpack.XXXXXX")
	# dpkg-source applies Debian's patches, so the suite matches the bwrap
	# Debian ships (its --bind-fd backport included).
	dpkg-source --no-check -x "$UP"/dl/${PKG}_*.dsc "$d/s" >>"$UP/fetch.log" 2>&1 ||
		{ echo "dpkg-source -x failed:"; tail -n 5 "$UP/fetch.log"; rm -rf "$d"; return 1; }
	rm -rf "$UP/src" && mv "$d/s" "$UP/src" && rm -rf "$d"
}

build_helpers() {
	mkdir -p "$UP/build/tests" || return 1
	[ "$UP/build/tests/try-syscall" -nt "$UP/src/tests/try-syscall.c" ] && return 0
	${CC:-cc} -O2 -Wall -o "$UP/build/tests/try-syscall" "$UP/src/tests/try-syscall.c"
}

# Where bubblewrap 0.12 (cloister's bar) deliberately changed what
# Debian's 0.8 suite asserts, the cloister run gets 0.12's expectation,
# in a copy of the tests ($1); the TAP line stays the same. 0.12 refuses
# to mount on a symlink destination ("Can't mount on symlink destination",
# its test-sandbox.py test_bind_to_symlink_dest_fails); 0.8's test-run.sh
# binds over one ("can bind a destination over a symlink"). A suite where
# the patched line is missing fails here, not silently.
V012_OLD='    $RUN $ALT --dir /tmp/dir --symlink dir /tmp/link --bind /etc /tmp/link true'
V012_NEW='    if $RUN $ALT --dir /tmp/dir --symlink dir /tmp/link --bind /etc /tmp/link true 2>symlink-dest.err; then exit 1; fi; grep -q "bwrap: Can'"'"'t mount on symlink destination /tmp/link" symlink-dest.err'
tests_for_012() {
	rm -rf "$1" && cp -a "$UP/src/tests" "$1" || return 1
	grep -qxF -- "$V012_OLD" "$1/test-run.sh" ||
		{ echo "test-run.sh no longer has the symlink-destination case this adapts"; return 1; }
	V012_OLD=$V012_OLD V012_NEW=$V012_NEW python3 -c '
import os, sys
p = sys.argv[1]
s = open(p).read().replace(os.environ["V012_OLD"] + "\n", os.environ["V012_NEW"] + "\n")
open(p, "w").write(s)' "$1/test-run.sh"
}

# Runs SCRIPT with BWRAP=$2 from the tests in $4; leaves the TAP lines in
# $3.tap, the exit status in $3.rc and everything in $3.log.
run_script() {
	local s=$1 bw=$2 out=$3 dir=$4 interp=bash had f
	case $s in *.py) interp=$PY ;; esac
	# test-run.sh leaves a /tmp/bwrap-test-XXXXXXXX of its own behind
	# each run; those this run made (and only those) are removed after it.
	had=$(printf '%s\n' /tmp/bwrap-test-*)
	(
		cd "$dir" &&
		BWRAP=$bw G_TEST_SRCDIR="$UP/src" G_TEST_BUILDDIR="$UP/build" BWRAP_MUST_WORK=1 \
			timeout -k 10 "$SCRIPT_TIMEOUT" "$interp" "./$s" </dev/null
	) >"$out.log" 2>&1
	echo $? >"$out.rc"
	for f in /tmp/bwrap-test-*; do
		[ -O "$f" ] && [ -f "$f" ] && ! grep -qxF -- "$f" <<<"$had" && rm -f -- "$f"
	done
	# TAP results without their numbers: "ok 3 - x" and "ok - x" are one.
	grep -E '^(not )?ok( |$)|^1\.\.' "$out.log" | sed -E 's/^(not )?ok [0-9]+/\1ok/' >"$out.tap"
}

counts() {  # TAPFILE: "N ok, N skipped, N not ok"
	local ok sk no
	ok=$(grep -c '^ok' "$1"); sk=$(grep -ci '^ok.*# *skip' "$1"); no=$(grep -c '^not ok' "$1")
	echo "$((ok - sk)) ok, $sk skipped, $no not ok"
}

compare() {  # SCRIPT
	local s=$1 r=$LOGS/bwrap-$1 c=$LOGS/cloister-$1 d
	echo "# $s as $(id -un): bwrap rc=$(cat "$r.rc") $(counts "$r.tap"); cloister rc=$(cat "$c.rc") $(counts "$c.tap")"
	if [ "$(cat "$r.rc")" = 124 ]; then
		echo "FAIL $TFILE: $s: Debian's bwrap run timed out after ${SCRIPT_TIMEOUT}s"; return
	fi
	if [ "$(cat "$r.rc")" != 0 ]; then
		echo "FAIL $TFILE: $s: Debian's bwrap fails its own suite here: $(grep -v '^+' "$r.log" | tail -n 2 | tr '\n' ' ')"
		return
	fi
	# Identical output that ran nothing (a whole-script skip) proves nothing.
	if ! grep -q '^ok' "$c.tap" || grep -q '^1\.\.0' "$c.tap"; then
		echo "FAIL $TFILE: $s: ran no test here: $(head -n 2 "$c.tap" | tr '\n' ' ')"; return
	fi
	d=$(diff "$r.tap" "$c.tap" | grep '^[<>]' | head -n 3 | tr '\n' ' ')
	if [ "$(cat "$c.rc")" = 0 ] && [ -z "$d" ]; then
		echo "PASS $TFILE: $s"
	else
		echo "FAIL $TFILE: $s: cloister rc=$(cat "$c.rc") (< bwrap, > cloister) $d| last: $(grep -v '^+' "$c.log" | tail -n 2 | tr '\n' ' ')"
	fi
}

main() {
	local s why
	PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
	[ -x "$BW" ] || { echo "FAIL $TFILE: setup: Debian's bwrap is missing ($BW): tests/deps.sh installs bubblewrap"; return; }
	[ -x "$CL" ] || { echo "FAIL $TFILE: setup: $CL not built"; return; }
	why=$(fetch) || { echo "FAIL $TFILE: fetch: $(printf '%s' "$why" | tr '\n' ' ')"; return; }
	why=$(build_helpers 2>&1) || { echo "FAIL $TFILE: build try-syscall: $why"; return; }
	LOGS=$(mktemp -d /tmp/cloister-upstream.XXXXXX)
	chmod 755 "$LOGS"
	# bwrap mode is chosen by the program name: the entry is a copy (a
	# hard link may be refused across owners) named bwrap.
	mkdir -p "$LOGS/bin" && cp "$CL" "$LOGS/bin/bwrap"
	why=$(tests_for_012 "$LOGS/tests-012" 2>&1) ||
		{ echo "FAIL $TFILE: 0.12 adaptation: $(printf '%s' "$why" | tr '\n' ' ')"; return; }
	for s in "${SCRIPTS[@]}"; do
		run_script "$s" "$BW" "$LOGS/bwrap-$s" "$UP/src/tests"
		run_script "$s" "$LOGS/bin/bwrap" "$LOGS/cloister-$s" "$LOGS/tests-012"
		compare "$s"
	done
	if [ "${UPSTREAM_KEEP:-0}" = 1 ]; then echo "# logs kept in $LOGS"; else rm -rf "$LOGS"; fi
}
# CLOISTER_PREPARE=1 (tests/prepare.sh): only the fetch and the helper
# build, before both passes start (the user pass runs on a copy of them).
if [ "${CLOISTER_PREPARE:-0}" = 1 ]; then
	fetch && build_helpers
	exit
fi
main
