#!/usr/bin/env python3
"""Peers for the supervisor tests (tests/integration/supervisor.sh, asan.sh):
a short-connection server run inside a sandbox behind --publish, and
clients that hammer it from the host. Loopback only; every socket has a
timeout so a broken relay fails a test instead of hanging it."""
import socket, sys, threading, time

TIMEOUT = 60   # per connection: generous, for slow and emulated machines


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def serve(port, ready):
    """Forever: accept, read one line, answer "ok:<line>", close."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(512)
    open(ready, "w").close()
    while True:
        c, _ = s.accept()
        c.settimeout(TIMEOUT)
        try:
            c.sendall(b"ok:" + c.makefile("rb").readline())
        except OSError:
            pass
        c.close()


def one(port, tag):
    """One short connection; True when the answer echoes tag."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as c:
            c.sendall(tag + b"\n")
            got = b""
            while True:
                b = c.recv(256)
                if not b:
                    break
                got += b
        return got == b"ok:" + tag + b"\n"
    except OSError:
        return False


def stress(port, clients, per):
    """clients threads x per sequential connections each; a thread stops
    at its first failure (bounded: one timeout per thread). Prints how
    many were answered and the seconds it took."""
    ok = [0] * clients
    def run(i):
        for j in range(per):
            if not one(port, f"c{i}-{j}".encode()):
                return
            ok[i] += 1
    t0 = time.monotonic()
    ts = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(sum(ok), f"{time.monotonic() - t0:.2f}")


def sequential(port, n):
    """n connections one after the other; stops at the first failure.
    Prints how many were answered."""
    for i in range(n):
        if not one(port, f"s{i}".encode()):
            break
    else:
        i = n
    print(i)


if __name__ == "__main__":
    f, a = sys.argv[1], sys.argv[2:]
    if f == "free_port":
        print(free_port())
    elif f == "serve":
        serve(int(a[0]), a[1])
    elif f == "stress":
        stress(int(a[0]), int(a[1]), int(a[2]))
    elif f == "sequential":
        sequential(int(a[0]), int(a[1]))
