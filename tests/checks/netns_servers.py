"""Real listeners for the isolation tests, run inside network namespaces the tests create.

Usage: python netns_servers.py KIND CERT KEY   (prints 'ready' once every socket is bound)

KIND is one of: kubelet, apiserver, apiserver-secure, etcd, bmc, imds-v1, imds-v2.
They answer the way the real services do to an anonymous client (documented per handler).
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

POD_LIST = {
    "kind": "PodList",
    "apiVersion": "v1",
    "metadata": {},
    "items": [
        {"metadata": {"name": "train-llama-0", "namespace": "tenant-b"}, "spec": {"nodeName": "gpu-17"}},
        {"metadata": {"name": "train-llama-1", "namespace": "tenant-b"}, "spec": {"nodeName": "gpu-17"}},
    ],
}
VERSION = {"major": "1", "minor": "30", "gitVersion": "v1.30.2", "platform": "linux/amd64"}
API_VERSIONS = {
    "kind": "APIVersions",
    "versions": ["v1"],
    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}],
}
STATUS_401 = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}
ETCD_VERSION = {"etcdserver": "3.5.12", "etcdcluster": "3.5.0"}
REDFISH_ROOT = {
    "@odata.id": "/redfish/v1/",
    "@odata.type": "#ServiceRoot.v1_11_0.ServiceRoot",
    "Id": "RootService",
    "Name": "Root Service",
    "RedfishVersion": "1.11.0",
}


def handler_for(routes: dict[str, tuple[int, object]]):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = routes.get(self.path, (404, {"kind": "Status", "code": 404}))
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


def serve_http(port: int, routes, cert: str | None = None, key: str | None = None):
    server = ThreadingHTTPServer(("0.0.0.0", port), handler_for(routes))
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def ipmi_responder(port: int = 623):
    """Answers the RMCP presence ping with a pong, and Get Channel Auth Capabilities with
    'IPMI v2.0, auth none/md2/md5/password, non-null user names only' (IPMI v2.0 spec 22.13)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", port))

    def loop():
        while True:
            data, addr = sock.recvfrom(512)
            if len(data) >= 12 and data[3] == 0x06 and data[8] == 0x80:
                tag = data[9]
                pong = bytes([0x06, 0x00, 0xFF, 0x06, 0x00, 0x00, 0x11, 0xBE, 0x40, tag, 0x00, 0x10])
                pong += bytes.fromhex("000011be 00000000 81 00 000000000000")
                sock.sendto(pong, addr)
            elif len(data) >= 22 and data[3] == 0x07 and data[19] == 0x38:
                body = [0x20, 0x00, 0x38, 0x00, 0x01, 0x97, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00]
                hdr = [0x81, 0x1C]
                chk1 = (-sum(hdr)) & 0xFF
                chk2 = (-sum(body)) & 0xFF
                msg = bytes([*hdr, chk1, *body, chk2])
                resp = bytes([0x06, 0x00, 0xFF, 0x07, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, len(msg)]) + msg
                sock.sendto(resp, addr)

    threading.Thread(target=loop, daemon=True).start()


def main() -> None:
    kind, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
    if kind == "kubelet":
        serve_http(10250, {"/pods": (200, POD_LIST)}, cert, key)  # --anonymous-auth=true, AlwaysAllow
        serve_http(10255, {"/pods": (200, POD_LIST)})  # the read-only port never authenticates
    elif kind == "apiserver":
        serve_http(6443, {"/version": (200, VERSION), "/api": (200, API_VERSIONS)}, cert, key)
    elif kind == "apiserver-secure":
        # default RBAC: system:public-info-viewer lets anonymous read /version only
        serve_http(6443, {"/version": (200, VERSION), "/api": (401, STATUS_401)}, cert, key)
    elif kind == "etcd":
        serve_http(2379, {"/version": (200, ETCD_VERSION)})  # plain-HTTP client URL, no client-cert auth
    elif kind == "bmc":
        ipmi_responder()
        serve_http(443, {"/redfish/v1/": (200, REDFISH_ROOT)}, cert, key)
    elif kind == "imds-v1":
        serve_http(80, {"/latest/meta-data/": (200, "ami-id\nhostname\niam/\ninstance-id\n")})
    elif kind == "imds-v2":
        serve_http(80, {"/latest/meta-data/": (401, "")})  # HttpTokens=required: 401 without a token
    else:
        raise SystemExit(f"unknown kind {kind}")
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
