# Can PATH be idmapped (open_tree clone + mount_setattr MOUNT_ATTR_IDMAP with
# the user namespace of PID)? Prints "idmappable" or "not idmappable: ERR".
# The bare-host control of root_identity.sh (util-linux < 2.39 has no
# X-mount.idmap, and an unknown X- option is ignored, not refused).
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(428, -100, sys.argv[1].encode(), 1 | 0x80000)  # open_tree(OPEN_TREE_CLONE|O_CLOEXEC)
if fd < 0: print("open_tree", os.strerror(ctypes.get_errno())); sys.exit(2)
ns = os.open("/proc/%s/ns/user" % sys.argv[2], os.O_RDONLY)
attr = ctypes.create_string_buffer(struct.pack("QQQQ", 0x100000, 0, 0, ns), 32)
r = libc.syscall(442, fd, b"", 0x1000, attr, 32)  # mount_setattr(AT_EMPTY_PATH, MOUNT_ATTR_IDMAP)
print("idmappable" if r == 0 else "not idmappable: " + os.strerror(ctypes.get_errno()))
