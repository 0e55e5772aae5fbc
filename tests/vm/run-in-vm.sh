#!/bin/bash
# tests/vm/run-in-vm.sh CMD [ARGS...]: boots a disposable QEMU guest (TCG,
# the host's Debian kernel) whose /sys/fs/cgroup is a pure cgroup v2 tree, and
# runs CMD there as root. The guest sees the host's / read-only through 9p with
# a tmpfs overlay on top, so it can run the build tree but never changes it.
# CMD's cwd, environment, stdout, stderr and exit status come back to the host.
# Exit: CMD's status; 124 when the guest ran out of time; 125 when the guest
# did not run (the console tail goes to stderr).
# Knobs: CG2_TIMEOUT (seconds, 300), CG2_MEM (MiB, 1024), CG2_SMP (1),
#   CG2_CPU (max), CG2_KVER (newest /boot/vmlinuz-*), CG2_DIR (/tmp/cg2: kernel
#   cache and per-run dirs), CG2_CONSOLE=1 (guest kernel log to stderr).
# Debian packages: qemu-system-x86 linux-image-amd64 busybox-static cpio
# xz-utils kmod (tests/deps.sh --vm). One boot costs a few seconds without
# KVM, so callers batch a whole test group into one CMD.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
KVER=${CG2_KVER:-$(ls /boot/vmlinuz-* | sed 's|.*/vmlinuz-||' | sort -V | tail -1)}
D=${CG2_DIR:-/tmp/cg2}; VMLINUX=$D/cache/vmlinux-$KVER
MODS="netfs fscache 9pnet 9p virtio_ring virtio 9pnet_virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console overlay"
if [ ! -s "$VMLINUX" ]; then   # the raw ELF boots via PVH: no decompression or firmware in the guest
  mkdir -p "$D/cache"; off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "/boot/vmlinuz-$KVER" | head -1 | cut -d: -f1)
  { tail -c +$((off + 1)) "/boot/vmlinuz-$KVER" || :; } | xz -dc --single-stream > "$VMLINUX.$$"
  mv "$VMLINUX.$$" "$VMLINUX"
fi
mkdir -p "$D"; T=$(mktemp -d "$D/run.XXXXXX"); QPID=   # the guest reads the job from here over 9p
trap 'exec 7>&- 8>&-; [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
mkdir -p "$T"/ir/{bin,mods,proc,sys,dev,host,rw,newroot}
cp /bin/busybox "$T/ir/bin/"
for m in $MODS; do cp "$(modinfo -k "$KVER" -n $m)" "$T/ir/mods/$m.ko"; done
cat > "$T/ir/init" <<EOF
#!/bin/busybox sh
set -e; export PATH=/bin; /bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $MODS; do insmod /mods/\$m.ko; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /host
mount -t tmpfs -o mode=755 rw /rw; mkdir /rw/u /rw/w
mount -t overlay -o lowerdir=/host,upperdir=/rw/u,workdir=/rw/w overlay /newroot
mount -t tmpfs -o mode=755,nosuid,nodev run /newroot/run; mkdir /newroot/run/cg2
cp /bin/busybox /stage2 /newroot/run/cg2/
for d in proc sys dev; do mount --move /\$d /newroot/\$d; done
exec switch_root /newroot /run/cg2/busybox sh /run/cg2/stage2
EOF
cat > "$T/ir/stage2" <<'EOF'
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup   # busybox applets, no host binary needed yet
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do echo +$c > /sys/fs/cgroup/cgroup.subtree_control; done
mkdir -p /dev/pts /dev/shm /dev/mqueue
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts; ln -sf pts/ptmx /dev/ptmx
mount -t tmpfs -o nosuid,nodev shm /dev/shm; mount -t mqueue mqueue /dev/mqueue
for f in 0:stdin 1:stdout 2:stderr; do ln -sf /proc/self/fd/${f%:*} /dev/${f#*:}; done
ln -sf /proc/self/fd /dev/fd; hostname cg2-vm
for p in 1 2 3; do   # port 1: stdout, 2: stderr, 3: exit code
  for i in $(seq 500); do set -- /dev/vport*p$p; [ -e "$1" ] && break; sleep 0.01; done; ln -s "$1" /dev/cg2.$p
done
for a in $(cat /proc/cmdline); do case $a in cg2.job=*) J=${a#cg2.job=};; esac; done
/bin/sh "$J/job" </dev/null >/dev/cg2.1 2>/dev/cg2.2   # the host's shell and PATH, as on the host
echo "$?" > /dev/cg2.3
# The ports' last bytes may still sit in the virtqueues (a guest write
# returns before qemu has taken them): poweroff -f at once lost the end of
# stdout on a loaded host. Give qemu a moment to drain them first.
sync; sleep 3
poweroff -f
EOF
chmod +x "$T/ir/init"
(cd "$T/ir" && find . | cpio -o -H newc --quiet) > "$T/initrd"
q() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }   # quote for the guest's POSIX sh
{ while IFS= read -r -d '' kv; do [[ ${kv%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && echo "export ${kv%%=*}=$(q "${kv#*=}")"
  done < <(env -0); echo "cd $(q "$PWD") || exit 127"; printf 'exec'; for a; do printf ' %s' "$(q "$a")"; done; echo; } > "$T/job"
mkfifo "$T/out" "$T/err"; exec 7<>"$T/out" 8<>"$T/err"   # our own write ends keep the readers from blocking on open
cat "$T/out" 7>&- 8>&- & cat "$T/err" >&2 7>&- 8>&- &
set +e
timeout -k 5 "${CG2_TIMEOUT:-300}" qemu-system-x86_64 -M pc -accel tcg -cpu ${CG2_CPU:-max} \
  -m "${CG2_MEM:-1024}" -smp "${CG2_SMP:-1}" -nodefaults -no-user-config -nographic -no-reboot \
  -kernel "$VMLINUX" -initrd "$T/initrd" \
  -append "console=ttyS0 quiet panic=-1 cryptomgr.notests mitigations=off pci=noacpi i8042.noaux i8042.nokbd i8042.nopnp cg2.job=$T" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -serial "file:$T/console" -device virtio-serial-pci \
  -chardev "file,id=o,path=$T/out" -device virtserialport,chardev=o,nr=1 \
  -chardev "file,id=e,path=$T/err" -device virtserialport,chardev=e,nr=2 \
  -chardev "file,id=s,path=$T/status" -device virtserialport,chardev=s,nr=3 \
  </dev/null 2>"$T/qemu.log" 7>&- 8>&- & QPID=$!
wait $QPID; qrc=$?; QPID=
exec 7>&- 8>&-; wait
[ "${CG2_CONSOLE:-0}" = 1 ] && cat "$T/console" >&2
rc=$(tr -dc 0-9 < "$T/status")
if [ -z "$rc" ]; then
  echo "run-in-vm: no exit status from guest (qemu rc=$qrc$([ $qrc = 124 ] && echo ', timed out')); console tail:" >&2
  tail -n 30 "$T/console" "$T/qemu.log" >&2; [ $qrc = 124 ] && exit 124; exit 125
fi
exit "$rc"
