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
  reset-once   send the first matching body half-way, then reset the connection (TCP RST)
  reset-always the same for every matching request
  drip         send the headers, then one body byte every --drip-interval seconds
  drip-once    drip on the first matching request only, then pass through
  redirect     answer matching requests with a 307 to the same path on another host name
               (http://localhost:<this port>), which this proxy then serves
  redirect-same  the same, to this very host (127.0.0.1:<this port>)
  redirect-http  answer matching requests with a 307 to the same URL in plain http:// (the
               host the request named), which this proxy serves when it is the HTTP proxy
  redirect-loop  answer matching requests with a 307 to the same path with `?hop=<n+1>`,
               forever (a redirect chain longer than any cap)
  big-manifest answer matching manifest requests with a --size byte document
  index-self   answer the --target tag with an index whose one entry names a digest that this
               proxy answers with the index itself (a manifest that references itself)
  index-nested answer the --target tag with an index whose one entry is the upstream index
               of tag --nested (an index nested in an index)
  auth         answer any request without an Authorization header with 401 and a Basic challenge
  bearer       act as a token-auth registry: 401 with a Bearer challenge whose realm is this
               proxy's /token, which hands out a token (logged with its scope and whether
               Basic credentials came with it); requests with the token pass through
  none         pass everything through

With --tls-cert/--tls-key it speaks HTTPS with that certificate instead of plain HTTP: a
registry on loopback that a client reaches by a host name (not `localhost` or 127.x, which
clients talk to in plain HTTP) and trusts through SSL_CERT_FILE.

Usage: fault_proxy.py --upstream 127.0.0.1:5000 --fault corrupt --target sha256:<hex> [--log FILE]
(for the manifest faults, --target names the tag, e.g. `manifests/v1`)
Stops on SIGTERM/SIGINT, or after --lifetime seconds (default 600) so a forgotten proxy
never outlives a test run.
"""
import argparse
import hashlib
import http.client
import http.server
import json
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
CHUNK = 64 * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True, help="host:port of the registry")
    ap.add_argument("--fault", default="none", choices=[
        "none", "corrupt", "size", "500-once", "500-always", "429-once", "cut-once", "auth", "bearer",
        "reset-once", "reset-always", "drip", "drip-once", "redirect", "redirect-same", "big-manifest",
        "index-self", "index-nested", "redirect-http", "redirect-loop"])
    ap.add_argument("--drip-interval", type=float, default=2.0)
    ap.add_argument("--size", type=int, default=5 << 20, help="body size for big-manifest")
    ap.add_argument("--nested", default="v1-multi", help="upstream tag of the index for index-nested")
    ap.add_argument("--target", default="", help="apply the fault to paths ending with this (default: any /blobs/ path)")
    ap.add_argument("--retry-after", default="2")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None)
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--tls-cert", default=None, help="PEM certificate: serve HTTPS")
    ap.add_argument("--tls-key", default=None)
    a = ap.parse_args()
    tls = None
    if a.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(a.tls_cert, a.tls_key)
    host, port = a.upstream.rsplit(":", 1)
    state = {"fired": False}
    lock = threading.Lock()
    log = open(a.log, "a", buffering=1) if a.log else None

    def matches(path):
        path = path.split("?", 1)[0]
        return path.endswith(a.target) if a.target else "/blobs/" in path

    def upstream_get(path, accept):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("GET", path, headers={"Accept": accept})
        up = conn.getresponse()
        body = up.read()
        conn.close()
        return body

    def index_of(digest, size, media_type):
        entry = {"mediaType": media_type, "digest": digest, "size": size, "platform": {"architecture": "amd64", "os": "linux"}}
        return json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [entry]}).encode()

    # index-self: an index whose entry names a digest that is answered with the index itself.
    loop_digest = "sha256:" + hashlib.sha256(b"fault-proxy: a manifest that references itself").hexdigest()
    loop_index = index_of(loop_digest, 1000, "application/vnd.oci.image.index.v1+json")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def note(self, status, fault):
            if log:
                log.write(f"{time.time():.3f} {self.command} {self.path} {status} {fault}\n")

        def send_plain(self, status, body, headers=(), content_type="application/json"):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Type", content_type)
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
            index = "application/vnd.oci.image.index.v1+json"
            if a.fault == "index-self" and (hit or self.path.split("?", 1)[0].endswith(loop_digest)):
                self.note(200, "index-self")
                return self.send_plain(200, loop_index, [("Content-Type", index)], content_type=index)
            if hit and a.fault == "index-nested":
                repo = self.path.split("/manifests/", 1)[0]
                nested = upstream_get(f"{repo}/manifests/{a.nested}", index)
                body = index_of("sha256:" + hashlib.sha256(nested).hexdigest(), len(nested), index)
                self.note(200, "index-nested")
                return self.send_plain(200, body, content_type=index)
            if hit and a.fault == "big-manifest":
                self.note(200, "big-manifest")
                body = b'{"schemaVersion":2,' + b" " * max(0, a.size - 20) + b"}"
                return self.send_plain(200, body, content_type="application/vnd.oci.image.manifest.v1+json")
            if hit and a.fault in ("redirect", "redirect-same") and "redirected" not in self.path:
                to = "localhost" if a.fault == "redirect" else "127.0.0.1"
                sep = "&" if "?" in self.path else "?"
                location = f"http://{to}:{self.server.server_address[1]}{self.path}{sep}redirected"
                self.note(307, f"{a.fault}:{location}")
                return self.send_plain(307, b"", [("Location", location)])
            if hit and a.fault == "redirect-http" and "redirected" not in self.path:
                sep = "&" if "?" in self.path else "?"
                location = f"http://{self.headers.get('Host')}{self.path}{sep}redirected"
                self.note(307, f"{a.fault}:{location}")
                return self.send_plain(307, b"", [("Location", location)])
            if hit and a.fault == "redirect-loop":
                path, _, query = self.path.partition("?")
                hop = int(urllib.parse.parse_qs(query).get("hop", ["0"])[0])
                self.note(307, f"{a.fault}:{hop + 1}")
                return self.send_plain(307, b"", [("Location", f"{path}?hop={hop + 1}")])
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
            ok = up.status in (200, 206) and length is not None
            if hit and ok and (a.fault == "reset-always" or (a.fault == "reset-once" and self.once())):
                fault = "reset"
            if hit and ok and (a.fault == "drip" or (a.fault == "drip-once" and self.once())):
                fault = "drip"
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
                if fault in ("cut-once", "reset") and sent + len(chunk) > middle:
                    self.wfile.write(chunk[: middle - sent])
                    self.wfile.flush()
                    if fault == "reset":  # linger 0: close() sends a TCP RST
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.close()
                    conn.close()
                    return
                if fault == "drip":
                    for i in range(len(chunk)):
                        self.wfile.write(chunk[i:i + 1])
                        self.wfile.flush()
                        time.sleep(a.drip_interval)
                    sent += len(chunk)
                    continue
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
    if tls:  # a failed handshake is an OSError of that one accept; the server goes on
        server.socket = tls.wrap_socket(server.socket, server_side=True)
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
