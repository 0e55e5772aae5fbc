#!/bin/bash
# Regenerates the escape-suite table in docs/security.md from a real run:
# tests/security/escape_suite.sh as root, then as the unprivileged test user
# on a world-readable copy (as tests/run.sh does), each row recorded with
# ESC_RESULTS; the table between the escape-table markers is replaced.
#   make all build/tests/escprobe && sudo tests/security/probes/escape_table.sh
# (It lives under probes/ so tests/run.sh, which runs tests/security/*.sh,
# does not take it for a suite.)
set -u
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
USER_NAME=${CLOISTER_TEST_USER:-cloister-test}
DOC=$TOP/docs/security.md
[ "$(id -u)" = 0 ] || { echo "escape_table.sh: run as root (it runs the suite as root and as $USER_NAME)" >&2; exit 1; }
id "$USER_NAME" >/dev/null 2>&1 || { echo "escape_table.sh: no user $USER_NAME (useradd -m $USER_NAME)" >&2; exit 1; }

work=$(mktemp -d /tmp/cloister-esctable.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
: >"$work/root.tsv"; : >"$work/user.tsv"; chmod 666 "$work/user.tsv"
ESC_RESULTS=$work/root.tsv bash "$TOP/tests/security/escape_suite.sh" >"$work/root.out" 2>&1
mkdir -p "$work/copy/build"
cp -a "$TOP/build/cloister" "$TOP/build/tests" "$work/copy/build/"
cp -a "$TOP/tests" "$work/copy/"
chmod -R a+rX "$work/copy"
runuser -u "$USER_NAME" -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin ESC_RESULTS="$work/user.tsv" \
	bash "$work/copy/tests/security/escape_suite.sh" >"$work/user.out" 2>&1
grep -h '^FAIL' "$work/root.out" "$work/user.out" && { echo "escape_table.sh: the suite failed; table not written" >&2; exit 1; }
echo "root: $(grep -c '^PASS' "$work/root.out") passed; $USER_NAME: $(grep -c '^PASS' "$work/user.out") passed"

"$TOP/build/tests/escprobe" list >"$work/list.tsv"
python3 - "$work/list.tsv" "$work/root.tsv" "$work/user.tsv" "$DOC" "$(uname -r)" <<'PY'
import re, sys
lst, rootf, userf, doc, kernel = sys.argv[1:]
# What stops each attack under `cloister run` defaults (the layer table
# above explains each layer). Keyed by name, else by name prefix.
LAYER = {
    "tty_tiocsctty": "pty; no capabilities",
    "tty_signal_pgrp": "pid namespace, setsid, pty",
    "tty_tiocsti": "pty; seccomp (TIOCSTI)", "tty_tiocsti_hibits": "pty; seccomp (32-bit compare)",
    "tty_tioclinux": "pty; seccomp (TIOCLINUX)", "tty_tioclinux_hibits": "pty; seccomp (32-bit compare)",
    "tty_": "pty (the command's own devpts)",
    "proc_": "pid namespace",
    "init_": "init non-dumpable",
    "runtime_foreign_exe_handle": "init non-dumpable",
    "runtime_binary_write": "mount namespace (not bound)",
    "state_": "mount namespace (not bound)",
    "cgroup_": "cgroup namespace, no capabilities, cgroupfs not mounted",
    "files_open_by_handle": "seccomp; no CAP_DAC_READ_SEARCH",
    "files_leaked_fds": "fds above 2 closed",
    "files_cwd_outside_root": "cwd set inside after pivot_root",
    "files_etc_shadow": "root: unprivileged host id; user: file mode",
    "files_block_devices": "minimal /dev",
    "files_mknod": "no CAP_MKNOD; nodev",
    "files_": "mount namespace (only listed binds)",
    "ns_unshare_mount_net": "seccomp; no capabilities",
    "ns_clone3": "seccomp (clone3: ENOSYS)",
    "ns_": "seccomp (CLONE_NEW* flags)",
    "mount_umount_proc_mask": "seccomp; no capabilities",
    "mount_": "seccomp; no capabilities",
    "abi_": "seccomp (foreign ABI killed)",
    "personality_": "seccomp (personality values)",
    "vsock_": "seccomp (AF_VSOCK, 32-bit compare)",
    "kexec": "seccomp; no capabilities", "init_module": "seccomp; no capabilities",
    "finit_module": "seccomp; no capabilities", "delete_module": "seccomp; no capabilities",
    "reboot": "seccomp; no capabilities", "swapon": "seccomp; no capabilities",
    "acct": "seccomp; no capabilities", "syslog": "seccomp",
    "io_uring": "seccomp", "bpf_": "seccomp", "perf_": "seccomp", "userfaultfd": "seccomp",
    "keyctl": "seccomp", "add_key": "seccomp",
    "priv_setuid_gains_nothing": "no_new_privs; nosuid binds",
    "priv_capability_sets_zero": "capabilities dropped",
    "priv_no_new_privs": "no_new_privs",
    "priv_proc_sys_write": "/proc/sys read-only; no capabilities",
    "priv_core_pattern_write": "/proc/sys read-only; no capabilities",
    "priv_sys_write": "/sys not mounted", "priv_uevent_helper_write": "/sys not mounted",
    "priv_sysrq_trigger": "read-only /proc/sysrq-trigger",
    "priv_kcore_read": "/proc mask", "priv_kallsyms_addresses": "/proc mask",
    "priv_dev_mem": "minimal /dev",
    "net_raw_socket": "no CAP_NET_RAW", "net_packet_socket": "no CAP_NET_RAW",
    "net_netlink_link_change": "no CAP_NET_ADMIN",
    "net_": "network namespace (lo only)",
    "res_fork_bomb": "RLIMIT_NPROC 2048 (default)",
    "res_memory_bomb": "--memory (cgroup; root here)",
    "res_tmpfs_fill": "/tmp size cap (default)",
    "res_output_flood": "--output-limit",
}
def layer(name):
    if name in LAYER: return LAYER[name]
    best = max((k for k in LAYER if name.startswith(k)), key=len, default="")
    return LAYER.get(best, "?")
res = {}
for who, f in (("root", rootf), ("user", userf)):
    for line in open(f):
        ident, w, p, verdict, text = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
        res[(ident, w, p)] = verdict
def cell(w, p):
    out = []
    for ident in ("root", "user"):
        v = res.get((ident, w, p))
        out.append({"blocked": "blocked", "escaped": "**open**", "broken": "error"}.get(v, "-"))
    return " / ".join(out)
rows = ["| probe | attack | expected | stopped by (cloister run) | host control | cloister run | cloister bwrap (Smithers argv) | cloister bwrap + hardening policy | Debian bwrap (same argv) |",
        "|---|---|---|---|---|---|---|---|---|"]
fam = None
for line in open(lst):
    name, family, ctl, note = line.rstrip("\n").split("\t")
    if family != fam:
        rows.append("| **%s** | | | | | | | | |" % family)
        fam = family
    rows.append("| `%s` | %s | refused | %s | %s | %s | %s | %s | %s |" % (
        name, note.replace("|", "\\|"), layer(name), cell("host", name), cell("run", name),
        cell("cbwrap", name), cell("cbwrap_policy", name), cell("bwrap", name)))
table = "\n".join(rows)
head = ("Generated by `tests/security/probes/escape_table.sh` (kernel %s). Each cell is "
        "root / unprivileged user: `blocked` = the attack failed, `**open**` = it worked, "
        "`-` = not run for that caller (a host control that needs root).\n\n" % kernel)
text = open(doc).read()
begin, end = "<!-- escape-table:begin -->", "<!-- escape-table:end -->"
if begin not in text or end not in text:
    sys.exit("escape_table.sh: markers not found in " + doc)
pre, rest = text.split(begin, 1)
_, post = rest.split(end, 1)
open(doc, "w").write(pre + begin + "\n" + head + table + "\n" + end + post)
print("table: %d probes written to %s" % (sum(1 for _ in open(lst)), doc))
PY
