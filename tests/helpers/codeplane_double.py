#!/usr/bin/env python3
"""TEST DOUBLE of Codeplane's workspace API -- not Codeplane.

Serves the documented routes under /api/repos/{owner}/{repo}/workspaces
with the documented shapes and statuses, for tests/integration/codeplane.sh.
Its "workspace" is a local directory (created on POST, removed on DELETE);
GET .../ssh points at the test's own sshd on 127.0.0.1.

  codeplane_double.py STATE_DIR   (reads STATE_DIR/config.json, writes
                                   STATE_DIR/port and STATE_DIR/requests.log)

config.json: {"token", "repo", "ssh_port", "ssh_user", "workdir", "result_dir",
              "rate_limit_first": N, "starting_polls": N, "fail_create": bool}
"""
import json, os, shutil, sys, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = sys.argv[1]
CFG = json.load(open(os.path.join(STATE, "config.json")))
LOCK = threading.Lock()
WS = {}          # id -> workspace
COUNT = {"req": 0}


def log(line):
    with LOCK, open(os.path.join(STATE, "requests.log"), "a") as f:
        f.write(line + "\n")


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, code, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, code, message, errors=()):
        self.send(code, {"message": message, "errors": list(errors)})

    def route(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        auth = self.headers.get("Authorization", "")
        log("%s %s auth=%s ctype=%s" % (method, self.path,
            "ok" if auth == "token " + CFG["token"] else "bad",
            self.headers.get("Content-Type", "-")))
        with LOCK:
            COUNT["req"] += 1
            limited = COUNT["req"] <= CFG.get("rate_limit_first", 0)
        if limited:
            return self.send(429, {"message": "API rate limit exceeded", "errors": []},
                             [("Retry-After", "1")])
        if auth != "token " + CFG["token"]:
            return self.error(401, "Bad credentials")
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[:2] != ["api", "repos"] or len(parts) < 5 or parts[4] != "workspaces":
            return self.error(404, "Not Found")
        if "/".join(parts[2:4]) != CFG["repo"]:
            return self.error(404, "Not Found", [{"resource": "Repository", "field": "name", "code": "missing"}])
        rest = parts[5:]
        if method == "POST" and not rest:
            body = json.loads(raw or b"{}")
            if self.headers.get("Content-Type") != "application/json" or not body.get("name"):
                return self.error(422, "Validation Failed", [{"resource": "Workspace", "field": "name", "code": "missing_field"}])
            if CFG.get("fail_create"):
                return self.error(422, "Validation Failed", [{"resource": "Workspace", "field": "snapshot_id", "code": "invalid"}])
            wid = str(uuid.uuid4())
            ws = {"id": wid, "name": body["name"], "status": "pending",
                  "snapshot_id": body.get("snapshot_id"), "polls": 0}
            os.makedirs(CFG["workdir"], exist_ok=True)
            WS[wid] = ws
            return self.send(201, {k: v for k, v in ws.items() if k != "polls"})
        if not rest or rest[0] not in WS:
            return self.error(404, "Not Found", [{"resource": "Workspace", "field": "id", "code": "missing"}])
        ws = WS[rest[0]]
        if method == "GET" and len(rest) == 1:
            ws["polls"] += 1
            if ws["status"] in ("pending", "starting", "resuming"):
                ws["status"] = "running" if ws["polls"] > CFG.get("starting_polls", 1) else "starting"
            return self.send(200, {k: v for k, v in ws.items() if k != "polls"})
        if method == "GET" and rest[1:] == ["ssh"]:
            return self.send(200, {"host": "127.0.0.1", "ssh_host": "127.0.0.1", "port": CFG["ssh_port"],
                                   "username": CFG["ssh_user"], "access_token": "ssh-" + uuid.uuid4().hex,
                                   "command": "ssh -p %d %s@127.0.0.1" % (CFG["ssh_port"], CFG["ssh_user"])})
        if method == "POST" and rest[1:] in (["suspend"], ["resume"]):
            # A resumed workspace is "resuming" until a later GET: the
            # client has to poll, as with a real start.
            ws["status"] = "suspended" if rest[1] == "suspend" else "resuming"
            ws["polls"] = 0
            return self.send(200, {k: v for k, v in ws.items() if k != "polls"})
        if method == "POST" and rest[1:] == ["snapshot"]:
            return self.send(201, {"id": str(uuid.uuid4()), "name": json.loads(raw or b"{}").get("name")})
        if method == "DELETE" and len(rest) == 1:
            del WS[rest[0]]
            # The machine goes away, read-only request included.
            for d in (CFG["workdir"], CFG.get("result_dir")):
                if d and os.path.isdir(d):
                    for root, dirs, _ in os.walk(d):
                        os.chmod(root, 0o700)
                    shutil.rmtree(d, ignore_errors=True)
            return self.send(204)
        return self.error(404, "Not Found")

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(STATE, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(STATE, "port.tmp"), os.path.join(STATE, "port"))
srv.serve_forever()
