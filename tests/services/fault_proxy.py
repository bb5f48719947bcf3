#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the image-source tests (stdlib only).

It listens on 127.0.0.1 (an ephemeral port unless --port), forwards every request to
the upstream registry (plain HTTP, loopback) and streams the answer back, except where
a fault is asked for. It prints its port on the first line of stdout, then logs one
line per request to --log (`<unix time> <method> <path> <status> <fault>`).

Faults (--fault), applied to requests whose path ends with --target (default: any blob):
  corrupt      flip one byte in the middle of the body (same length)
  size         append one byte to the body, with a Content-Length to match
  500-once     answer the first matching request with 500, then pass through
  500-always   answer every matching request with 500
  429-once     answer the first matching request with 429 and `Retry-After: <--retry-after>`
  cut-once     send the first matching body only half-way, then close the connection
  auth         answer any request without an Authorization header with 401 and a Basic challenge
  bearer       act as a token-auth registry: 401 with a Bearer challenge whose realm is this
               proxy's /token, which hands out a token (logged with its scope and whether
               Basic credentials came with it); requests with the token pass through
  none         pass everything through

Usage: fault_proxy.py --upstream 127.0.0.1:5000 --fault corrupt --target sha256:<hex> [--log FILE]
Stops on SIGTERM/SIGINT, or after --lifetime seconds (default 600) so a forgotten proxy
never outlives a test run.
"""
import argparse
import http.client
import http.server
import sys
import threading
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
CHUNK = 64 * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True, help="host:port of the registry")
    ap.add_argument("--fault", default="none", choices=["none", "corrupt", "size", "500-once", "500-always", "429-once", "cut-once", "auth", "bearer"])
    ap.add_argument("--target", default="", help="apply the fault to paths ending with this (default: any /blobs/ path)")
    ap.add_argument("--retry-after", default="2")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None)
    ap.add_argument("--lifetime", type=float, default=600)
    a = ap.parse_args()
    host, port = a.upstream.rsplit(":", 1)
    state = {"fired": False}
    lock = threading.Lock()
    log = open(a.log, "a", buffering=1) if a.log else None

    def matches(path):
        path = path.split("?", 1)[0]
        return path.endswith(a.target) if a.target else "/blobs/" in path

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def note(self, status, fault):
            if log:
                log.write(f"{time.time():.3f} {self.command} {self.path} {status} {fault}\n")

        def send_plain(self, status, body, headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def once(self):
            with lock:
                if state["fired"]:
                    return False
                state["fired"] = True
                return True

        def do_HEAD(self):
            self.forward()

        def do_GET(self):
            self.forward()

        def forward(self):
            try:
                self.relay()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up (e.g. it refused a size lie): nothing to send

        def relay(self):
            hit = matches(self.path)
            if a.fault == "auth" and not self.headers.get("Authorization"):
                self.note(401, "auth")
                body = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
                return self.send_plain(401, body, [("WWW-Authenticate", 'Basic realm="fault-proxy"')])
            if a.fault == "bearer":
                url = urllib.parse.urlsplit(self.path)
                if url.path == "/token":
                    scope = urllib.parse.parse_qs(url.query).get("scope", [""])[0]
                    basic = "basic" if (self.headers.get("Authorization") or "").startswith("Basic ") else "anonymous"
                    self.note(200, f"token:{scope}:{basic}")
                    return self.send_plain(200, b'{"token":"fault-proxy-token"}')
                if self.headers.get("Authorization") != "Bearer fault-proxy-token":
                    self.note(401, "bearer")
                    realm = f'Bearer realm="http://127.0.0.1:{self.server.server_address[1]}/token",service="fault-proxy"'
                    body = b'{"errors":[{"code":"UNAUTHORIZED","message":"token required"}]}'
                    return self.send_plain(401, body, [("WWW-Authenticate", realm)])
            if hit and (a.fault == "500-always" or (a.fault == "500-once" and self.once())):
                self.note(500, a.fault)
                return self.send_plain(500, b'{"errors":[{"code":"UNKNOWN","message":"injected"}]}')
            if hit and a.fault == "429-once" and self.once():
                self.note(429, "429-once")
                body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"injected"}]}'
                return self.send_plain(429, body, [("Retry-After", a.retry_after)])
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
            conn.request(self.command, self.path, headers=headers)
            up = conn.getresponse()
            length = up.getheader("Content-Length")
            fault = a.fault if hit and up.status == 200 and a.fault in ("corrupt", "size") else ""
            if hit and up.status == 200 and a.fault == "cut-once" and length is not None and self.once():
                fault = "cut-once"
            self.send_response(up.status)
            for k, v in up.getheaders():
                if k.lower() in HOP or k.lower() == "content-length":
                    continue
                self.send_header(k, v)
            total = int(length) if length is not None else None
            if total is not None:
                self.send_header("Content-Length", str(total + (1 if fault == "size" else 0)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.note(up.status, fault or "-")
            if self.command == "HEAD":
                return
            middle = (total // 2) if total else 0
            sent = 0
            while True:
                chunk = up.read(CHUNK)
                if not chunk:
                    break
                if fault == "cut-once" and sent + len(chunk) > middle:
                    self.wfile.write(chunk[: middle - sent])
                    self.wfile.flush()
                    conn.close()
                    return
                if fault == "corrupt" and sent <= middle < sent + len(chunk):
                    i = middle - sent
                    chunk = chunk[:i] + bytes([chunk[i] ^ 0xFF]) + chunk[i + 1:]
                self.wfile.write(chunk)
                sent += len(chunk)
            if fault == "size":
                self.wfile.write(b"\0")
            conn.close()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    timer = threading.Timer(a.lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
