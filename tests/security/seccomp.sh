#!/bin/bash
# Seccomp: the default profile, unconfined and Docker's profile, asserted by
# the errno each syscall gets inside the sandbox (tests/helpers/scprobe.c);
# nested namespaces, foreign ABIs, bwrap interop, no state a sandbox can
# poison (there is no BPF cache), bad input.
source "$(dirname "$0")/../lib.sh"

PROBE=$HELPERS/scprobe
DOCKER=$TOP/tests/fixtures/docker-default-seccomp.json
# Each test gets its own XDG_CACHE_HOME: nothing may be shared through it.
cache_env() { export XDG_CACHE_HOME=$T_TMP/cache; }
probe() {  # profile-args... -- probe-args...
	local a=()
	while [ "$1" != -- ]; do a+=("$1"); shift; done; shift
	cache_env
	clr run "${a[@]}" --ro "$PROBE:/probe" -- /probe "$@"
}

# probe           default       unconfined           docker
# (alternatives with |; "host": the kernel's own answer depends on host
# sysctls, so the same probe on the bare host decides: see host_answers)
TABLE='
getppid            OK            OK                   OK
ioctl_tcgets       EBADF         EBADF                EBADF
ioctl_tiocsti      EPERM         EBADF                EBADF
ioctl_tiocsti_hi   EPERM         EBADF                EBADF
ioctl_tioclinux    EPERM         EBADF                EBADF
ioctl_tioclinux_hi EPERM         EBADF                EBADF
unshare            EPERM         EINVAL               EPERM
setns              EPERM         EBADF                EPERM
clone_newuser      EPERM         EINVAL               EPERM
clone_newns        EPERM         EINVAL               EPERM
clone_newnet_hi    EPERM         EINVAL               EPERM
clone_thread_bad   EINVAL        EINVAL               EINVAL
clone3             ENOSYS        EINVAL               ENOSYS
io_uring_setup     EPERM         host                 EPERM
io_uring_enter     EPERM         host                 EPERM
io_uring_register  EPERM         host                 EPERM
bpf                EPERM         host                 EPERM
perf_event_open    EPERM         host                 EPERM
userfaultfd        EPERM         host                 EPERM
keyctl             EPERM         EOPNOTSUPP           EPERM
add_key            EPERM         EFAULT               EPERM
request_key        EPERM         EFAULT               EPERM
mount              EPERM         EFAULT               EPERM
umount2            EPERM         EINVAL               EPERM
open_tree          EPERM         EINVAL               EPERM
name_to_handle_at  EPERM         EINVAL               EINVAL
chroot             EPERM         EFAULT               EPERM
clock_settime      EPERM         EFAULT               EPERM
ptrace             ESRCH         ESRCH                ESRCH
personality_query  OK            OK                   OK
personality_linux32 OK           OK                   OK
personality_noaslr EPERM         OK                   EPERM
socket_unix        EINVAL        EINVAL               EINVAL
socket_vsock       EAFNOSUPPORT  EINVAL               EPERM
socket_vsock_hi    EAFNOSUPPORT  EINVAL               EINVAL
get_mempolicy      EPERM         EINVAL               EPERM
kcmp               ESRCH         ESRCH                EPERM
seccomp            EINVAL        EINVAL               EINVAL
memfd_create       EFAULT        EFAULT               EFAULT
'

# The control for the "host" rows: the same prober on the bare host, as
# nobody under the root pass (setpriv; no capability of the init namespace,
# like any sandbox) and as the caller under the user pass.
as_nobody() {
	if is_root; then setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all -- "$@"
	else "$@"; fi
}
HOST_ANSWERS=""
host_answers() {
	[ -n "$HOST_ANSWERS" ] || HOST_ANSWERS=$(as_nobody "$PROBE" $(printf '%s\n' "$TABLE" | awk '$3 == "host" {print $1}'))
	[ -n "$HOST_ANSWERS" ] || fail "host control: the prober printed nothing as nobody"
}

check_table() {  # column profile-args...
	local col=$1 name want got line host bad=""; shift
	host_answers
	probe "$@" --
	assert_eq 0 "$RC" "prober exit code ($ERR)"
	while read -r name d u k; do
		[ -n "$name" ] || continue
		case $col in 1) want=$d ;; 2) want=$u ;; 3) want=$k ;; esac
		line=$(printf '%s\n' "$OUT" | grep "^$name ")
		got=${line#* }
		if [ "$u" = host ]; then
			line=$(printf '%s\n' "$HOST_ANSWERS" | grep "^$name ")
			host=${line#* }
			[ -n "$host" ] || fail "host control: no answer for $name"
			# Where the host lets nobody through, the filter's denial is what
			# we see; where the host refuses, the sandbox is no weaker.
			case $host in OK|EFAULT|EBADF|EINVAL) note "$name: host permits ($host)" ;;
			*) note "$name: host refuses ($host)" ;; esac
			[ "$want" = host ] && want=$host
		fi
		[[ "|$want|" == *"|$got|"* ]] || bad="$bad $name=$got(want $want)"
	done <<<"$TABLE"
	[ -z "$bad" ] || fail "unexpected errno:$bad"
	# Every probe the prober knows is in the table (and got a line).
	assert_eq "$(printf '%s\n' "$TABLE" | grep -c .)" "$(printf '%s\n' "$OUT" | grep -c .)" "probe count"
}

t_table_default() { check_table 1 --seccomp default; }
t_table_unconfined() { check_table 2 --seccomp unconfined; }
t_table_docker_profile() { check_table 3 --seccomp "$DOCKER"; }

t_docker_profile_follows_caps() {
	probe --seccomp "$DOCKER" --cap-add CAP_SYS_ADMIN -- unshare clone3 mount
	assert_eq 0 "$RC" "exit code ($ERR)"
	# CAP_SYS_ADMIN includes unshare/clone3/mount in Docker's profile: the
	# kernel then sees the bad arguments.
	assert_eq "unshare EINVAL
clone3 EINVAL
mount EFAULT" "$OUT" "with CAP_SYS_ADMIN"
}

t_docker_profile_warns_once() {
	probe --seccomp "$DOCKER" -- getppid
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c 'warning: .*skipping syscalls unknown to libseccomp')" "one warning line (cold)"
	probe --seccomp "$DOCKER" -- getppid
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c 'warning: .*skipping syscalls unknown to libseccomp')" "one warning line (second run)"
	assert_eq "getppid OK" "$OUT" "probe output"
}

pty_check() {  # expected-tiocsti expected-hi profile-args...
	local a=$1 b=$2; shift 2
	probe "$@" -- pty
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_contains "$OUT" "pty_tiocsti $a"
	assert_contains "$OUT" "pty_tiocsti_hi $b"
}
t_pty_tiocsti_default_denied() {
	pty_check EPERM EPERM --seccomp default
	assert_contains "$OUT" "pty_tioclinux_hi EPERM"
}
# The control: the pty probe on the bare host, as nobody. Where the host
# kernel injects the byte (legacy TIOCSTI), unconfined must too (the attack
# is real here) and the default profile must stop it; where the host refuses
# (legacy_tiocsti=0: EIO), unconfined gives the host's answer.
t_pty_tiocsti_unconfined_injects() {
	local h a b
	h=$(as_nobody "$PROBE" pty)
	a=$(printf '%s\n' "$h" | sed -n 's/^pty_tiocsti //p')
	b=$(printf '%s\n' "$h" | sed -n 's/^pty_tiocsti_hi //p')
	[ -n "$a" ] && [ -n "$b" ] || fail "host pty control: $h"
	if [ "$a" = OK ]; then note "host pty: TIOCSTI injects"; else note "host pty: TIOCSTI refused ($a)"; fi
	pty_check "$a" "$b" --seccomp unconfined
	pty_check EPERM EPERM --seccomp default
}

# The control: the same probe on the bare host. Where the kernel makes
# i386/x32 syscalls (it prints "int80 OK"), the default profile must kill
# them (SIGSYS, 159) and unconfined must let them through. Where the kernel
# refuses them itself (ia32_emulation=0 makes int 0x80 a SIGSEGV; a kernel
# without CONFIG_X86_X32_ABI answers ENOSYS), the sandbox must be no weaker:
# never "OK" inside, and unconfined gives what the host gave.
t_foreign_abi_killed() {
	local m hout hrc
	for m in int80 x32; do
		hout=$("$PROBE" "$m" 2>/dev/null); hrc=$?
		probe --seccomp default -- "$m"
		if [ "$hrc" = 0 ] && [ "$hout" = "$m OK" ]; then
			note "$m: host makes the syscall, sandbox kills it"
			assert_eq 159 "$RC" "$m under default: killed by SIGSYS"
			assert_eq "" "$OUT" "$m printed nothing"
			probe --seccomp unconfined -- "$m"
			assert_eq 0 "$RC" "$m unconfined"
			assert_eq "$m OK" "$OUT" "$m unconfined"
		else
			note "$m: host kernel refuses it (exit $hrc, '${hout:-no output}'), so does the sandbox"
			[ "$RC" = 159 ] || [ "$RC" = "$hrc" ] || fail "$m under default: exit $RC, host $hrc"
			assert_not_contains "$OUT" "$m OK" "$m under default"
			probe --seccomp unconfined -- "$m"
			assert_eq "$hrc" "$RC" "$m unconfined exits as on the host"
			assert_eq "$hout" "$OUT" "$m unconfined prints what the host printed"
		fi
	done
}

# The control: a user namespace on the bare host, as the caller.
host_userns() { unshare -U true 2>/dev/null; }
t_nested_userns_blocked_by_default() {
	cache_env
	if host_userns; then note "host: unshare -U works"; else note "host: unshare -U refused"; fi
	clr run -- unshare -U true
	[ "$RC" != 0 ] || fail "unshare -U succeeded under the default profile"
	assert_contains "$ERR" "Operation not permitted"
}

t_nested_userns_allowed_with_flag() {
	cache_env
	# No uid map is written: mapping uid 0 (the root pass) would need
	# CAP_SETFCAP (kernel >= 5.12), which the sandbox does not have.
	clr run --allow-nested -- sh -c 'readlink /proc/self/ns/user; unshare -U sh -c "readlink /proc/self/ns/user; id -u"'
	if ! host_userns; then
		note "host refuses unshare -U: so must the sandbox"
		[ "$RC" != 0 ] || fail "nested user namespace where the host has none: $OUT"
		return
	fi
	note "host: unshare -U works"
	assert_eq 0 "$RC" "exit code ($ERR)"
	set -- $OUT
	[ "$#" = 3 ] && [ "$1" != "$2" ] || fail "no new user namespace: $OUT"
	assert_eq 65534 "$3" "unmapped uid in the nested namespace"
}

t_ordinary_programs_run() {
	cache_env
	clr run -- sh -c '
		set -e
		ls -la / >/dev/null; cat /etc/os-release >/dev/null; sort </etc/passwd >/dev/null
		find /usr/lib -maxdepth 1 >/dev/null; tar -cf /tmp/t.tar /etc/hostname 2>/dev/null
		mkdir /tmp/d && touch /tmp/d/f && chmod 600 /tmp/d/f && mv /tmp/d/f /tmp/d/g && rm -r /tmp/d
		python3 -c "
import os, subprocess, threading, socket, tempfile, multiprocessing
t = threading.Thread(target=lambda: None); t.start(); t.join()
assert subprocess.run([\"true\"]).returncode == 0
a, b = socket.socketpair(); a.send(b\"x\"); assert b.recv(1) == b\"x\"
with multiprocessing.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
print(\"py ok\")"
		printf "int main(void){return 7;}\n" >/tmp/m.c
		gcc -O2 /tmp/m.c -o /tmp/m; set +e; /tmp/m; echo "gcc rc=$?"'
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq "py ok
gcc rc=7" "$OUT"
}

t_compiled_bpf_works_in_bwrap() {
	local names="getppid ioctl_tiocsti_hi clone_newuser clone3 mount socket_vsock personality_noaslr io_uring_setup"
	cache_env
	clr seccomp compile default -o "$T_TMP/d.bpf"
	assert_eq 0 "$RC" "compile ($ERR)"
	[ $(( $(stat -c %s "$T_TMP/d.bpf") % 8 )) = 0 ] || fail "not whole instructions"
	probe --seccomp default -- $names
	local want=$OUT
	OUT=$(bwrap --ro-bind / / --dev /dev --seccomp 3 "$PROBE" $names 3<"$T_TMP/d.bpf" 2>&1)
	assert_eq "$want" "$OUT" "bwrap --seccomp with our BPF"
	probe --seccomp-bpf "$T_TMP/d.bpf" -- $names
	assert_eq "$want" "$OUT" "cloister --seccomp-bpf with the same BPF"
	# From a pipe, as bwrap users hand programs over.
	probe --seccomp-bpf /dev/fd/3 -- $names 3< <(cat "$T_TMP/d.bpf")
	assert_eq "$want" "$OUT" "cloister --seccomp-bpf from a pipe"
}

t_show_json_round_trips() {
	cache_env
	clr seccomp show default --json
	assert_eq 0 "$RC" "show ($ERR)"
	printf '%s\n' "$OUT" >"$T_TMP/d.json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["defaultAction"]=="SCMP_ACT_ERRNO" and d["defaultErrnoRet"]==38' "$T_TMP/d.json" || fail "show --json is not the expected JSON"
	clr seccomp compile default -o "$T_TMP/a.bpf"
	clr seccomp compile "$T_TMP/d.json" -o "$T_TMP/b.bpf"
	assert_eq 0 "$RC" "compile the shown JSON ($ERR)"
	cmp -s "$T_TMP/a.bpf" "$T_TMP/b.bpf" || fail "shown JSON compiles to a different program"
}

t_show_text_lists_reasons() {
	clr seccomp show default
	assert_eq 0 "$RC"
	assert_contains "$OUT" "default action: SCMP_ACT_ERRNO(ENOSYS)"
	assert_contains "$OUT" "SCMP_ACT_KILL_PROCESS"
	assert_contains "$OUT" "if arg1 & 0xffffffff == 0x5412"
	assert_contains "$OUT" "CVE-2017-5226"
	clr seccomp show default --allow-nested
	assert_contains "$OUT" "unshare                SCMP_ACT_ALLOW"
	clr seccomp show "$DOCKER"
	assert_eq 0 "$RC"
	assert_contains "$OUT" "clone3                 SCMP_ACT_ERRNO(ENOSYS)"
	assert_contains "$OUT" "architectures: SCMP_ARCH_X86_64 SCMP_ARCH_X86 SCMP_ARCH_X32"
}

t_cli_errors() {
	clr seccomp
	assert_eq 125 "$RC" "no subcommand"
	clr seccomp frobnicate default
	assert_eq 125 "$RC"; assert_contains "$ERR" "unknown command 'frobnicate'"
	clr seccomp compile default
	assert_eq 125 "$RC"; assert_contains "$ERR" "-o FILE.bpf is required"
	clr seccomp compile unconfined -o "$T_TMP/u.bpf"
	assert_eq 125 "$RC"; assert_contains "$ERR" "no program"
	clr seccomp show default extra
	assert_eq 125 "$RC"; assert_contains "$ERR" "expected one PROFILE"
	clr seccomp show default --cap-add CAP_NOPE
	assert_eq 125 "$RC"; assert_contains "$ERR" "unknown capability"
	clr seccomp compile default -o /proc/nonexistent/x.bpf
	assert_eq 125 "$RC"; assert_contains "$ERR" "opening /proc/nonexistent/x.bpf"
	clr seccomp show unconfined
	assert_eq 0 "$RC"; assert_contains "$OUT" "default action: SCMP_ACT_ALLOW"
	clr seccomp --help
	assert_eq 0 "$RC"; assert_contains "$OUT" "usage: cloister seccomp compile"
}

t_docker_bpf_works_in_bwrap() {
	local names="unshare clone3 socket_vsock personality_noaslr getppid"
	cache_env
	clr seccomp compile "$DOCKER" -o "$T_TMP/k.bpf"
	assert_eq 0 "$RC" "compile ($ERR)"
	OUT=$(bwrap --ro-bind / / --dev /dev --seccomp 3 "$PROBE" $names 3<"$T_TMP/k.bpf" 2>&1)
	assert_eq "getppid OK
unshare EPERM
clone3 ENOSYS
personality_noaslr EPERM
socket_vsock EPERM" "$OUT" "bwrap with Docker's profile"
}

# ---- no trusted state a sandbox can write (issue #14, hole 1) ----
# Runs inside the sandbox with the cache dir bound read-write: rewrites
# every entry the old on-disk cache format would load (magic, format 1,
# sizes, key, SHA-256 over header and payload) into one instruction,
# SECCOMP_RET_ALLOW, checksum recomputed; prints how many it rewrote.
POISON='import glob, hashlib, struct, sys
n = 0
for p in glob.glob(sys.argv[1] + "/*.bpf"):
    d = open(p, "rb").read()
    if len(d) < 88 or d[:8] != b"CLSCBPF\0":
        continue
    key = d[24:56]
    prog = struct.pack("<HBBI", 0x06, 0, 0, 0x7fff0000)
    head = b"CLSCBPF\0" + struct.pack("<IIII", 1, 1, 0, 0) + key
    open(p, "wb").write(head + hashlib.sha256(head + prog).digest() + prog)
    n += 1
print(n)'

poison_then_probe() {  # profile-args...: the reproducer from the issue
	local X; X=$(mktemp -d "$T_TMP/xdg.XXXXXX")
	XDG_CACHE_HOME=$X clr run "$@" -- true
	assert_eq 0 "$RC" "first run ($ERR)"
	# Nothing of a run may be left where a later sandbox could write it.
	assert_eq "" "$(find "$X" -mindepth 1 2>/dev/null)" "files left in XDG_CACHE_HOME"
	mkdir -p "$X/cloister"
	XDG_CACHE_HOME=$X clr run --rw "$X/cloister" -- python3 -c "$POISON" "$X/cloister"
	assert_eq 0 "$RC" "poisoning run ($ERR)"
	POISONED=$OUT
	XDG_CACHE_HOME=$X clr run "$@" -- unshare -U id
	[ "$RC" != 0 ] || fail "unshare -U succeeded after $POISONED cache entries were rewritten from a sandbox: $OUT"
	assert_contains "$ERR" "Operation not permitted" "unshare denied by the filter"
	assert_eq 0 "$POISONED" "cache entries a sandbox could rewrite"
}
t_cache_poisoning_default() { poison_then_probe; }
t_cache_poisoning_user_profile() { poison_then_probe --seccomp "$DOCKER"; }

t_default_program_is_built_in() {
	# The default profile is compiled into the binary: no compile, no
	# cache, whatever XDG_CACHE_HOME and HOME say.
	XDG_CACHE_HOME=/proc/no-such-dir HOME=/proc/no-such-dir CLOISTER_DEBUG=seccomp clr run -- true
	assert_eq 0 "$RC" "run ($ERR)"
	assert_contains "$ERR" "seccomp default: built-in program"
	CLOISTER_DEBUG=seccomp clr run --allow-nested -- true
	assert_contains "$ERR" "seccomp default: built-in program"
	CLOISTER_DEBUG=seccomp clr run --seccomp "$DOCKER" -- true
	assert_contains "$ERR" "seccomp $DOCKER: compiled program"
}

# ---- bad input: one line, exit 125, nothing started ----
bad_profile() {  # json expected-substring
	cache_env
	printf '%s' "$1" >"$T_TMP/p.json"
	clr run --seccomp "$T_TMP/p.json" -- echo STARTED
	assert_eq 125 "$RC" "exit code"
	assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line: $ERR"
	assert_contains "$ERR" "cloister: "
	assert_contains "$ERR" "$2"
	assert_not_contains "$OUT" STARTED
	clr seccomp compile "$T_TMP/p.json" -o "$T_TMP/x.bpf"
	assert_eq 125 "$RC" "compile exit code"
	[ ! -e "$T_TMP/x.bpf" ] || fail "compile left an output file"
}
t_bad_malformed_json() {
	bad_profile '{"defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [ } ]}' "line 2, column"
}
t_bad_unknown_action() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_FOO"}]}' "syscalls[0].action: unknown action 'SCMP_ACT_FOO'"
}
t_bad_unknown_default_action() {
	bad_profile '{"defaultAction":"ALLOW"}' "unknown action 'ALLOW'"
}
t_bad_unknown_arch() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_VAX"]}' "unknown architecture SCMP_ARCH_VAX"
}
t_bad_op() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_XX"}]}]}' "unknown operator SCMP_CMP_XX"
}
t_bad_arg_index() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}]}' "syscalls[0].args[0]: index"
}
t_bad_archmap_and_architectures() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64"],"archMap":[{"architecture":"SCMP_ARCH_X86_64","subArchitectures":[]}]}' '"architectures" and "archMap" are both set'
}
t_bad_notify() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_NOTIFY"}]}' "SCMP_ACT_NOTIFY is not supported"
}
t_bad_missing_names() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"action":"SCMP_ACT_ERRNO"}]}' 'syscalls[0]: expected "names"'
}
t_bad_flag() {
	bad_profile '{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_NOPE"]}' "unknown or unsupported flag"
}
t_bad_profile_missing() {
	cache_env
	clr run --seccomp "$T_TMP/nope.json" -- echo STARTED
	assert_eq 125 "$RC"; assert_contains "$ERR" "opening seccomp profile"
	assert_not_contains "$OUT" STARTED
}
t_bad_bpf_files() {
	cache_env
	printf '1234567' >"$T_TMP/odd.bpf"
	clr run --seccomp-bpf "$T_TMP/odd.bpf" -- echo STARTED
	assert_eq 125 "$RC"; assert_contains "$ERR" "whole number of 8-byte instructions"
	head -c $((4097 * 8)) /dev/zero >"$T_TMP/big.bpf"
	clr run --seccomp-bpf "$T_TMP/big.bpf" -- echo STARTED
	assert_eq 125 "$RC"; assert_contains "$ERR" "at most"
	: >"$T_TMP/empty.bpf"
	clr run --seccomp-bpf "$T_TMP/empty.bpf" -- echo STARTED
	assert_eq 125 "$RC"
	# Whole instructions the kernel rejects (no return): fails at load, in the child.
	head -c 16 /dev/zero >"$T_TMP/noret.bpf"
	clr run --seccomp-bpf "$T_TMP/noret.bpf" -- echo STARTED
	assert_eq 125 "$RC"; assert_contains "$ERR" "seccomp filter"
	assert_not_contains "$OUT" STARTED
}

t_profile_features() {
	# OR on one argument, AND across arguments, errnoRet, flags, legacy name.
	cache_env
	cat >"$T_TMP/p.json" <<'J'
{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_LOG"],
 "syscalls":[
  {"name":"ioctl","action":"SCMP_ACT_ERRNO","errnoRet":5,
   "args":[{"index":1,"value":21522,"op":"SCMP_CMP_EQ"},{"index":1,"value":21505,"op":"SCMP_CMP_EQ"}]},
  {"names":["socket"],"action":"SCMP_ACT_ERRNO","errnoRet":13,
   "args":[{"index":0,"value":1,"op":"SCMP_CMP_EQ"},{"index":1,"value":4294967295,"valueTwo":4294967295,"op":"SCMP_CMP_MASKED_EQ"}]},
  {"names":["mount"],"action":"SCMP_ACT_ERRNO","includes":{"caps":["CAP_SYS_ADMIN"]}},
  {"names":["chroot"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"excludes":{"caps":["CAP_SYS_ADMIN"]}},
  {"names":["no_such_syscall_xyz"],"action":"SCMP_ACT_ERRNO"}
 ]}
J
	probe --seccomp "$T_TMP/p.json" -- ioctl_tiocsti ioctl_tcgets socket_unix socket_vsock mount chroot
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq "ioctl_tcgets EIO
ioctl_tiocsti EIO
mount EFAULT
chroot EPERM
socket_unix EACCES
socket_vsock EINVAL" "$OUT"
	assert_contains "$ERR" "skipping syscalls unknown to libseccomp 2.5.4: no_such_syscall_xyz"
}
run_tests
