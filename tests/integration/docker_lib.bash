# Shared by the docker executor suites (docker_*.sh): a real dockerd from
# Debian's docker.io started by tests/helpers/dockerd.sh with a static
# busybox image imported (root only), each suite holding its own lease.
. "$(dirname "$0")/../lib.sh"
# The sourcing suite's lease on a shared dockerd (tests/helpers/dockerd.sh).
export DOCKERD_USER=$$

IMAGE=cloister-test/busybox:1
export CLOISTER_DOCKER_IMAGE=$IMAGE
py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)" "${@:2}"; }

# Runs "$@" where this process may not create user namespaces: its own
# user namespace with max_user_namespaces 0 (the limit is per namespace,
# the host's stays as it is). Native then fails exactly as on a host that
# forbids them. Root's ids map to themselves, so the docker socket stays
# reachable.
no_userns() {
	unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh "$@"
}


# A Smithers-shaped spec in $T_TMP/spec.json: command, runtime, extra members.
spec() {
	mkdir -p "$T_TMP/req"
	python3 - "$T_TMP" "$1" "$2" "${3:-}" >"$T_TMP/spec.json" <<'PY'
import json, sys
tmp, cmd, rt, extra = sys.argv[1:5]
s = {"runId": "r1", "sandboxId": "s1", "rootDir": tmp, "command": cmd, "runtime": rt,
     "requestBundlePath": tmp + "/req"}
if extra:
    s.update(json.loads("{" + extra + "}"))
print(json.dumps(s))
PY
}
event_types() { "$CL" events r1 --root "$T_TMP" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in sys.stdin))'; }

docker_up() {
	bash "$TOP/tests/helpers/dockerd.sh" up "$IMAGE" || fail "dockerd could not be started"
}
# Containers whose name says cloister process PID made them.
containers_of() { docker ps -aq --filter "name=^cloister-$1-"; }
dk() { docker_up; clr run --runtime docker "$@"; }
