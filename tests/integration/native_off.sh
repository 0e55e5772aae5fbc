#!/bin/bash
# The NATIVE=0 build: no native runtime, no libseccomp/libcap/libmnl, only
# the fallback executors. Builds it in its own object tree
# (build/matrix/native0) and runs the fallback path with it against the real
# dockerd of tests/helpers/dockerd.sh. Root pass only: it builds from the
# sources (the unprivileged pass runs on a copy without them) and starts
# dockerd.
source "$(dirname "$0")/../lib.sh"
# This suite's lease on a shared dockerd (tests/helpers/dockerd.sh).
export DOCKERD_USER=$$
[ "$(id -u)" = 0 ] || exit 0
N0=$TOP/build/matrix/native0   # build/matrix: the main build does not read its .d files
IMAGE=cloister-test/busybox:1
export CLOISTER_DOCKER_IMAGE=$IMAGE
py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }

build0() {
	# (env -u: an outer make -jN must not add its jobserver to ours)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -j2 B="$N0" NATIVE=0 \
		WERROR=-Werror "$N0/cloister" >"$T_TMP/build.log" 2>&1 ||
		fail "NATIVE=0 build: $(grep -E 'error|warning' "$T_TMP/build.log" | head -3)"
	CL=$N0/cloister
}

t_builds_without_the_native_libraries() {
	build0
	! ldd "$CL" | grep -E 'libseccomp|libcap|libmnl' || fail "linked against a native library"
	! nm "$CL" | grep -E ' [TU] (seccomp_|cap_from_name|mnl_)' || fail "native library symbols inside"
	! nm "$CL" | grep -q ' T ns_' || fail "native runtime code inside"
}

t_check_says_native_is_unavailable_and_why() {
	build0
	clr check --json
	assert_eq 0 "$RC" "check ($ERR)"
	assert_eq "False" "$(py '[p for p in j if p["name"]=="native runtime"][0]["ok"]' <<<"$OUT")" "native ok"
	assert_contains "$(py '[p for p in j if p["name"]=="native runtime"][0]["detail"]' <<<"$OUT")" "built with NATIVE=0"
	assert_not_contains "$OUT" '"user namespaces"' "native-only probes"
}

t_native_and_bwrap_are_refused_by_name() {
	build0
	clr run --runtime native -- true
	assert_eq 125 "$RC" "--runtime native"
	assert_contains "$ERR" "native runtime is not part of this build (built with NATIVE=0)"
	clr bwrap --ro-bind / / true
	assert_eq 125 "$RC" bwrap
	assert_contains "$ERR" "bwrap needs the native runtime"
}

t_auto_falls_back_to_docker_with_the_policy() {
	build0
	bash "$TOP/tests/helpers/dockerd.sh" up "$IMAGE" || fail "dockerd could not be started"
	clr run --json-status "$T_TMP/st.json" --env A=1 -- sh -c \
		'grep -e ^CapEff -e ^NoNewPrivs -e ^Seccomp: /proc/self/status; grep -c : /proc/net/dev; echo $A'
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq "CapEff:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
1
1" "$OUT" "isolation in the fallback"
	assert_eq docker "$(py 'j["runtime"]' <"$T_TMP/st.json")" runtime
	assert_eq "" "$ERR" "no note: docker is this build's runtime"
}

t_auto_without_daemon_names_every_reason() {
	build0
	DOCKER_HOST=unix://$T_TMP/no.sock clr run -- true
	assert_eq 125 "$RC" exit
	assert_contains "$ERR" "no runtime can run this sandbox: native: the native runtime is not part of this build"
	assert_contains "$ERR" "docker: connecting to the docker daemon"
	DOCKER_HOST=unix://$T_TMP/no.sock clr run --runtime docker -- true
	assert_eq 125 "$RC" "explicit docker"
	assert_contains "$ERR" "no native runtime to fall back to"
}

run_tests
# A daemon the suite started goes with it (one already running stays).
if is_root; then bash "$TOP/tests/helpers/dockerd.sh" down; fi
