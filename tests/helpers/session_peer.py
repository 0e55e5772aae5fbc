#!/usr/bin/env python3
"""Talks to a cloister session's control socket directly, for the session
tests: raw requests (malformed ones included), fd passing, reply decoding.

  session_peer.py fuzz SOCK N       N malformed requests; prints "ok" if every
                                    one got an error reply or a hang-up
  session_peer.py pipeino SOCK      runs `readlink /proc/self/fd/1` with a pipe
                                    as stdout; prints "same" if the command saw
                                    our pipe itself (no relay copying)
  session_peer.py connect SOCK      one ping: "0", "refused" or "error ERRNO"
  session_peer.py hold SOCK FILE    connects and sends nothing: writes "connected"
                                    (or "error ERRNO") to FILE, then prints what
                                    the server did: "reply CODE MSG", "hup", or
                                    "timeout" after 200 s
"""
import os, random, socket, struct, sys

REPLY = struct.Struct("<Iii480sIq")
MAGIC = 0x436C5331


def call(path, payload, fds=()):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(30)
    # room for the oversized case (the kernel doubles this, up to wmem_max)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    s.connect(path)
    try:
        s.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(
            b"".join(struct.pack("i", f) for f in fds)))] if fds else [])
    except OSError as e:
        # too big for the socket (refused at our end), or the server has
        # answered and hung up already: its reply may still be queued
        try:
            data = s.recv(REPLY.size + 16)
        except OSError:
            data = b""
        s.close()
        if not data:
            return ("send", e.errno)
        return decode(data)
    data = s.recv(REPLY.size + 16)
    s.close()
    if not data:
        return ("hup", None)
    return decode(data)


def decode(data):
    if len(data) != REPLY.size:
        return ("bad-size", len(data))
    magic, code, flags, msg, _, _ = REPLY.unpack(data)
    if magic != MAGIC:
        return ("bad-magic", magic)
    return ("reply", code, msg.split(b"\0")[0].decode(errors="replace"))


def tokens(*t):
    return b"".join(x + b"\0" for x in t)


def cases(n):
    null = os.open("/dev/null", os.O_RDWR)
    fixed = [
        (b"", ()), (b"exec", ()), (tokens(b"exec"), (null, null, null)),
        (tokens(b"nope"), ()), (tokens(b"exec", b"Atrue"), ()),
        (tokens(b"exec", b"Atrue"), (null,)), (tokens(b"exec", b"Atrue"), (null,) * 4),
        (tokens(b"exec", b"Xbad", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Wrelative", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"E=x", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Enoequals", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"T0", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"T99999999999999999999999", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"C0", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"C8", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"C12", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Z24", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Zx80", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Z24x-1", b"Atrue"), (null, null, null)),
        (tokens(b"exec", b"Z65536x80", b"Atrue"), (null, null, null)),
        (tokens(b"put", b"P/x", b"C1"), (null,)),
        (tokens(b"put", b"P/x", b"R2"), (null,)), (tokens(b"exec", b"R1", b"Atrue"), (null,) * 3),
        (tokens(b"put", b"Prelative"), (null,)), (tokens(b"put", b"P/x", b"M9999"), (null,)),
        (tokens(b"put", b"P/x", b"N../up"), (null,)), (tokens(b"put", b"P/x", b"N.."), (null,)),
        (tokens(b"get"), (null,)), (tokens(b"get", b"P/a", b"P/b"), (null,)),
        (tokens(b"stop", b"Atrue"), ()), (tokens(b"ping"), (null,)),
        (tokens(b"snap"), (null,)), (tokens(b"snap", b"I"), ()), (tokens(b"snap", b"Ia/b"), ()),
        (tokens(b"snap", b"I.."), ()), (tokens(b"snap", b"Ia", b"Ib"), ()),
        (tokens(b"snap", b"I" + b"x" * 65), ()), (tokens(b"snap", b"Atrue"), ()),
        (tokens(b"snap", b"P/x"), ()), (tokens(b"exec", b"Ia", b"Atrue"), (null,) * 3),
        (b"exec\0Atrue", (null, null, null)),            # not NUL-terminated
        (tokens(b"exec") + b"A" * 300000 + b"\0", (null, null, null)),   # too long
        (tokens(b"exec") + b"".join(b"Ax\0" for _ in range(5000)), (null, null, null)),
    ]
    for c in fixed:
        yield c
    rnd = random.Random(15)
    # (snap: the fuzzed session has no workspace, so even a valid one is refused)
    ops = [b"exec", b"put", b"get", b"stop", b"ping", b"snap", b"\xff\xfe", b""]
    for _ in range(n):
        body = rnd.choice(ops) + b"\0"
        for _ in range(rnd.randrange(6)):
            body += bytes(rnd.randrange(256) for _ in range(rnd.randrange(12)))
            if rnd.random() < 0.7:
                body += b"\0"
        # the only valid shape the fuzzer could hit by chance is stop: never
        # send it (it would end the session we are testing)
        if body.startswith(b"stop\0") and body.count(b"\0") == 1:
            body += b"Abad\0"
        if body.startswith(b"ping\0") and body.count(b"\0") == 1:
            body += b"?\0"
        nfd = rnd.choice([0, 0, 1, 3, 5])
        yield body, (null,) * nfd


def fuzz(path, n):
    for payload, fds in cases(n):
        r = call(path, payload, fds)
        if r[0] == "send":
            continue
        if r[0] == "hup":
            continue
        if r[0] != "reply" or r[1] != 125:
            print("unexpected answer to %r: %r" % (payload[:60], r))
            return 1
    print("ok")
    return 0


def pipeino(path):
    r, w = os.pipe()
    null = os.open("/dev/null", os.O_RDWR)
    req = tokens(b"exec", b"Areadlink", b"A/proc/self/fd/1")
    res = call(path, req, (null, w, null))
    os.close(w)
    out = os.read(r, 4096).decode().strip()
    want = "pipe:[%d]" % os.fstat(r).st_ino
    print("same" if out == want else "different: %r vs %r (%r)" % (out, want, res))
    return 0


def hold(path, note):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
    except OSError as e:
        with open(note, "w") as f:
            f.write("error %d\n" % e.errno)
        return 0
    with open(note, "w") as f:
        f.write("connected\n")
    s.settimeout(200)
    try:
        data = s.recv(REPLY.size + 16)
    except socket.timeout:
        print("timeout")
        return 0
    except OSError as e:
        print("error", e.errno)
        return 0
    if not data:
        print("hup")
        return 0
    r = decode(data)
    print(" ".join(str(x) for x in r))
    return 0


def main():
    if sys.argv[1] == "hold":
        return hold(sys.argv[2], sys.argv[3])
    if sys.argv[1] == "fuzz":
        return fuzz(sys.argv[2], int(sys.argv[3]))
    if sys.argv[1] == "pipeino":
        return pipeino(sys.argv[2])
    # connect failing: "error N"; connected but answered with an error or
    # dropped (the server refused us): "refused"; else the reply code
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(sys.argv[2])
    except OSError as e:
        print("error", e.errno)
        return 0
    s.close()
    try:
        r = call(sys.argv[2], tokens(b"ping"))
    except OSError:
        r = ("hup",)
    print(r[1] if r[0] == "reply" and r[1] == 0 else "refused")
    return 0


sys.exit(main())
