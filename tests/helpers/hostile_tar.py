#!/usr/bin/env python3
"""A hostile remote's `tar` for tests/integration/codeplane.sh: extraction
(-x) is handed to the real tar; creation writes the archive named by MODE
instead of the result, to stdout.

  HOSTILE_TAR_MODE=dotdot|absolute|symlink|oversized|garbage  hostile_tar.py ARGS...
  HOSTILE_TAR_ABS: the absolute member name for MODE=absolute
"""
import io, os, sys, tarfile

if any(a.startswith("-x") or a == "-x" for a in sys.argv[1:]):
    os.execv("/usr/bin/tar", ["tar"] + sys.argv[1:])

mode = os.environ.get("HOSTILE_TAR_MODE", "")
out = sys.stdout.buffer


def member(name, data=b"", kind=tarfile.REGTYPE, link=""):
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.size, ti.mode = kind, link, len(data), 0o644
    out.write(ti.tobuf(format=tarfile.USTAR_FORMAT))
    if data:
        out.write(data + b"\0" * (-len(data) % 512))


member("sandbox-result.json", b'{"bundlePath":"/result"}')
member("./", kind=tarfile.DIRTYPE)
member("./README.md", b'{"status":"finished"}')
if mode == "dotdot":
    member("./../x", b"escaped")
elif mode == "absolute":
    member(os.environ["HOSTILE_TAR_ABS"], b"escaped")
elif mode == "symlink":
    member("./lnk", kind=tarfile.SYMTYPE, link="/etc/passwd")
    member("./lnk", b"pwned:x:0:0::/:/bin/sh\n")
elif mode == "oversized":
    # The header announces more than the bundle limit; only a little follows.
    ti = tarfile.TarInfo("./big")
    ti.size = 200 * 1024 * 1024
    out.write(ti.tobuf(format=tarfile.USTAR_FORMAT))
    out.write(b"\0" * 65536)
    out.flush()
    sys.exit(0)
elif mode == "garbage":
    out.write(b"not a tar header" * 64)
    sys.exit(0)
out.write(b"\0" * 1024)
