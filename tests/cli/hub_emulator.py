"""A small stand-in for the Hugging Face Hub on loopback, for memplan's Hub tests.

Serves repositories from a directory (ROOT/ORG/NAME/FILE) the way the Hub's resolve
endpoint does: GET /ORG/NAME/resolve/REVISION/FILE answers config.json and the index
directly with an X-Repo-Commit header, and redirects .safetensors files to a second host
name (localhost instead of 127.0.0.1, like the Hub's CDN), which honours Range requests.
Special repositories: gated/* wants "Authorization: Bearer sesame" (else 401), slow/*
never answers within a test's timeout. GET /_stats returns {"safetensors_bytes": N}, the
bytes of .safetensors files served so far.
"""

import http.server
import json
import os
import re
import threading
import time

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Hub:
    def __init__(self, root):
        self.root = root
        self.safetensors_bytes = 0
        self.lock = threading.Lock()
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def send(self, status, body=b"", headers=None):
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/_stats":
                    return self.send(200, json.dumps({"safetensors_bytes": hub.safetensors_bytes}).encode())
                m = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/([^/]+)/([^/]+)", self.path)
                if m:
                    return self.resolve(*m.groups())
                m = re.fullmatch(r"/cdn/([^/]+)/([^/]+)/([^/]+)", self.path)
                if m:
                    return self.file(*m.groups())
                self.send(404, b"no such route")

            def resolve(self, org, name, revision, file):
                if org == "slow":
                    time.sleep(30)
                if org == "gated" and self.headers.get("Authorization") != "Bearer sesame":
                    return self.send(401, b"Access to model gated/" + name.encode() + b" is restricted.")
                path = os.path.join(hub.root, org, name, file)
                if not os.path.isfile(path):
                    return self.send(404, b"Entry not found", {"X-Error-Code": "EntryNotFound"})
                if file.endswith(".safetensors"):
                    host, port = self.server.server_address
                    return self.send(302, b"", {"Location": f"http://localhost:{port}/cdn/{org}/{name}/{file}",
                                                "X-Repo-Commit": COMMIT})
                with open(path, "rb") as f:
                    self.send(200, f.read(), {"X-Repo-Commit": COMMIT, "Content-Type": "application/json"})

            def file(self, org, name, file):
                path = os.path.join(hub.root, org, name, file)
                if not os.path.isfile(path):
                    return self.send(404, b"Entry not found")
                size = os.path.getsize(path)
                first, last = 0, size - 1
                m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
                status = 200
                if m:
                    first, last = int(m.group(1)), min(int(m.group(2)), size - 1)
                    status = 206
                with open(path, "rb") as f:
                    f.seek(first)
                    body = f.read(last - first + 1)
                with hub.lock:
                    hub.safetensors_bytes += len(body)
                headers = {"Accept-Ranges": "bytes"}
                if status == 206:
                    headers["Content-Range"] = f"bytes {first}-{last}/{size}"
                self.send(status, body, headers)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
