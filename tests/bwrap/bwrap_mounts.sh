#!/bin/bash
# Differential: mount operations in argv order (binds, tmpfs with --perms/
# --size, dirs, files and data from fds, symlinks, chmod, remount-ro,
# proc/dev/mqueue) and their effects on the host.
source "$(dirname "$0")/difflib.bash"

mk_src() { mkdir -p "$T_TMP/src/sub"; echo content >"$T_TMP/src/file"; echo s >"$T_TMP/src/sub/x"; }

t_sys_mounts() { both "${SYS[@]}" /probe mounts root; }
t_proc_dev_tmp_mqueue() {
	both --unshare-ipc "${SYS[@]}" --proc /proc --tmpfs /tmp --mqueue /dev/mqueue /probe mounts
}
t_mqueue_shared_ipc() {
	# Unprivileged, mqueue needs an ipc namespace of our own: both refuse.
	ALLOW_FAIL=1 both "${SYS[@]}" --mqueue /dev/mqueue true
}
t_dev_nodes() { both "${SYS[@]}" --dev /dev sh -c 'ls -A /dev; echo x >/dev/null && echo null-ok'; }
t_bind_rw_writes_host() {
	mk_src
	both "${SYS[@]}" --bind "$T_TMP/src" /w sh -c 'echo new >/w/created; mkdir /w/d; cat /w/file'
	assert_eq "new" "$(cat "$T_TMP/src/created")" "file created on the host"
}
t_ro_bind_refuses_writes() {
	mk_src
	both "${SYS[@]}" --ro-bind "$T_TMP/src" /r sh -c 'cat /r/sub/x; touch /r/y 2>/dev/null || echo ro'
}
t_bind_order_later_wins() {
	mk_src; mkdir -p "$T_TMP/other"; echo other >"$T_TMP/other/file"
	both "${SYS[@]}" --ro-bind "$T_TMP/src" /m --ro-bind "$T_TMP/other" /m cat /m/file
}
t_bind_nested_order() {
	mk_src; mkdir -p "$T_TMP/inner"; echo inner >"$T_TMP/inner/i"
	both "${SYS[@]}" --bind "$T_TMP/src" /m --ro-bind "$T_TMP/inner" /m/sub /probe mounts
}
t_bind_try_missing() { both "${SYS[@]}" --bind-try /nonexistent/x /x --ro-bind-try /nonexistent /y /probe root; }
t_dev_bind() { both "${SYS[@]}" --dev-bind /dev/null /dev/null sh -c 'echo hi >/dev/null && echo ok'; }
t_bind_file() {
	mk_src
	both "${SYS[@]}" --tmpfs /t --ro-bind "$T_TMP/src/file" /t/injected cat /t/injected
}
t_bind_relative_source() {
	mk_src
	cd "$T_TMP" && both "${SYS[@]}" --ro-bind src /rel cat /rel/file
}
t_bind_fd() {
	mk_src
	both "${SYS[@]}" --bind-fd 8 /viafd cat /viafd/file 8<"$T_TMP/src"
}
t_ro_bind_fd() {
	mk_src
	both "${SYS[@]}" --ro-bind-fd 8 /viafd sh -c 'touch /viafd/n 2>/dev/null || echo ro' 8<"$T_TMP/src"
}
t_remount_ro() {
	mk_src
	both "${SYS[@]}" --bind "$T_TMP/src" /m --remount-ro /m sh -c 'touch /m/n 2>/dev/null || echo ro'
}
t_tmpfs_default_mode() { both "${SYS[@]}" --tmpfs /t stat -c '%a %U' /t; }
t_tmpfs_perms() { both "${SYS[@]}" --perms 01777 --tmpfs /t stat -c %a /t; }
t_tmpfs_size() { both "${SYS[@]}" --size 1048576 --tmpfs /t sh -c 'df -k /t | tail -n1 | tr -s " " | cut -d" " -f2'; }
t_tmpfs_perms_and_size() {
	both "${SYS[@]}" --size 2097152 --perms 0700 --tmpfs /t sh -c 'stat -c %a /t; df -k /t | tail -n1 | tr -s " " | cut -d" " -f2'
}
t_dir_default_and_perms() {
	both "${SYS[@]}" --tmpfs /t --dir /t/a --perms 0710 --dir /t/b --dir /t/c/d stat -c '%n %a' /t/a /t/b /t/c /t/c/d
}
t_file_from_fd() {
	printf 'line1\nline2\n' >"$T_TMP/data"
	FD5=$T_TMP/data both "${SYS[@]}" --tmpfs /t --file 5 /t/f sh -c 'stat -c %a /t/f; cat /t/f'
}
t_file_perms() {
	printf 'x' >"$T_TMP/data"
	FD5=$T_TMP/data both "${SYS[@]}" --tmpfs /t --perms 0640 --file 5 /t/f stat -c %a /t/f
}
t_bind_data() {
	printf 'secret\n' >"$T_TMP/data"
	FD5=$T_TMP/data both "${SYS[@]}" --tmpfs /t --bind-data 5 /t/data sh -c 'stat -c %a /t/data; cat /t/data; echo more >>/t/data && cat /t/data'
}
t_ro_bind_data() {
	printf 'ro-data\n' >"$T_TMP/data"
	FD5=$T_TMP/data both "${SYS[@]}" --tmpfs /t --perms 0644 --ro-bind-data 5 /t/rodata sh -c 'stat -c %a /t/rodata; cat /t/rodata; echo x >>/t/rodata 2>/dev/null || echo ro'
}
t_symlink() { both "${SYS[@]}" --tmpfs /t --symlink /etc/hostname /t/link sh -c 'readlink /t/link'; }
t_symlink_relative() { both "${SYS[@]}" --tmpfs /t --symlink ../usr /t/u readlink /t/u; }
t_chmod() { both "${SYS[@]}" --tmpfs /t --dir /t/x --chmod 0700 /t/x --chmod 0751 /t stat -c '%n %a' /t /t/x; }
t_root_is_writable_tmpfs() { both "${SYS[@]}" sh -c 'mkdir /newdir && echo made; stat -c %a /'; }
t_mounts_in_argv_order() {
	# A tmpfs after a bind hides it; a bind after a tmpfs shows on top.
	mk_src
	both "${SYS[@]}" --ro-bind "$T_TMP/src" /a --tmpfs /a --tmpfs /b --ro-bind "$T_TMP/src" /b sh -c 'ls /a; ls /b'
}
t_host_tree_after_binds() {
	mk_src
	for who in bwrap cloister; do
		rm -rf "$T_TMP/w"; mkdir "$T_TMP/w"
		impl $who "${SYS[@]}" --bind "$T_TMP/w" /w sh -c 'mkdir -p /w/a/b; echo 1 >/w/a/f; chmod 600 /w/a/f; ln -s f /w/a/l' || fail "$who failed"
		host_tree "$T_TMP/w" >"$T_TMP/$who.tree"
	done
	assert_eq "$(cat "$T_TMP/bwrap.tree")" "$(cat "$T_TMP/cloister.tree")" "files created on the host"
}

run_tests
