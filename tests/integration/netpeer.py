#!/usr/bin/env python3
"""Network peers for tests/integration/network.sh: small servers and
clients with bounded loops and timeouts (loopback only)."""
import hashlib, os, socket, sys, threading, time


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def serve_sink(port, count, ready=None, timeout=60):
    """Accept `count` connections; per connection read to EOF, reply with
    the sha256 of what arrived and the byte count (tests half-close)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(128)
    s.settimeout(timeout)   # never hang a test run
    if ready:
        open(ready, "w").close()
    def one(c):
        h, n = hashlib.sha256(), 0
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            h.update(b)
            n += len(b)
        c.sendall(f"{h.hexdigest()} {n}\n".encode())
        c.close()
    ts = []
    for _ in range(count):
        c, _ = s.accept()
        t = threading.Thread(target=one, args=(c,))
        t.start()
        ts.append(t)
    for t in ts:
        t.join()


def send_blob(port, size, timeout=60):
    """Send `size` pseudo-random bytes, half-close, print the local sha256
    and size, then the server's reply."""
    c = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    h, left, seed = hashlib.sha256(), size, hashlib.sha256(b"seed").digest()
    block = (seed * 2048)[:1 << 16]
    while left > 0:
        b = block[:min(left, len(block))]
        c.sendall(b)
        h.update(b)
        left -= len(b)
    c.shutdown(socket.SHUT_WR)
    reply = b""
    while not reply.endswith(b"\n"):
        b = c.recv(256)
        if not b:
            break
        reply += b
    print(f"{h.hexdigest()} {size}")
    print(reply.decode().strip())


def concurrent(port, n):
    """n simultaneous connections, each sends its index and expects the
    sink's digest of it; prints how many matched."""
    ok = []
    def one(i):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=30)
            msg = f"conn-{i}".encode()
            c.sendall(msg)
            c.shutdown(socket.SHUT_WR)
            r = c.makefile().readline().split()
            if r and r[0] == hashlib.sha256(msg).hexdigest():
                ok.append(i)
        except OSError:
            pass
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(len(ok))


def udp_echo(port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    s.settimeout(30)
    for _ in range(count):
        b, a = s.recvfrom(65536)
        s.sendto(b"echo:" + b, a)


def udp_ask(port, msg):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    for _ in range(10):   # the first datagram may race the server's bind
        s.sendto(msg.encode(), ("127.0.0.1", port))
        try:
            print(s.recvfrom(65536)[0].decode())
            return
        except socket.timeout:
            continue
    print("timeout")


def late_sink(port, up, go, delay):
    """A server that starts late: says it runs (file `up`), waits for the
    client's file `go`, sleeps `delay` s, then listens and answers one
    connection as serve_sink does. Exits 3 if nobody came in 10 s."""
    open(up, "w").close()
    for _ in range(3000):   # 30 s at most
        if os.path.exists(go):
            break
        time.sleep(0.01)
    time.sleep(delay)
    try:
        serve_sink(port, 1, timeout=10)
    except socket.timeout:
        sys.exit(3)


def late_client(port, go=None):
    """Connects, then creates `go` (a late_sink starts listening `delay`
    later), sends a message and half-closes. Prints what it got: served
    (the sink's digest), eof or reset, and the seconds since connecting."""
    msg = b"late client"
    t0 = time.monotonic()
    try:
        # A reset can come before connect() returns (the relay accepted
        # and reset at once): that is a reset too.
        c = socket.create_connection(("127.0.0.1", port), timeout=30)
        t0 = time.monotonic()
        if go:
            open(go, "w").close()
        c.sendall(msg)
        c.shutdown(socket.SHUT_WR)
        r = c.makefile("rb").readline().split()
        got = "served" if r and r[0].decode() == hashlib.sha256(msg).hexdigest() else "eof"
    except (ConnectionResetError, BrokenPipeError):
        got = "reset"
        if go:
            open(go, "w").close()   # the late server need not wait on
    print(f"{got} {time.monotonic() - t0:.3f}")


def try_connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        print("connected")
    except OSError:
        print("refused")


if __name__ == "__main__":
    f, args = sys.argv[1], sys.argv[2:]
    if f == "free_port":
        print(free_port(socket.SOCK_DGRAM if args and args[0] == "udp" else socket.SOCK_STREAM))
    elif f == "serve_sink":
        serve_sink(int(args[0]), int(args[1]), args[2] if len(args) > 2 else None)
    elif f == "send_blob":
        send_blob(int(args[0]), int(args[1]))
    elif f == "concurrent":
        concurrent(int(args[0]), int(args[1]))
    elif f == "udp_echo":
        udp_echo(int(args[0]), int(args[1]))
    elif f == "udp_ask":
        udp_ask(int(args[0]), args[1])
    elif f == "late_sink":
        late_sink(int(args[0]), args[1], args[2], float(args[3]))
    elif f == "late_client":
        late_client(int(args[0]), args[1] if len(args) > 1 else None)
    elif f == "try_connect":
        try_connect(int(args[0]))
