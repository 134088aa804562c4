#!/usr/bin/python3
"""board_proxy.py: an HTTP proxy on 127.0.0.1 in front of one board agent,
for tests that need a board that lies. Every request is passed on as it
came (method, path, headers, body) and every answer passed back, except:

  --corrupt-downloads   the answer to a GET of /v1/blobs/<digest>,
                        /v1/jobs/<id>/result or /v1/jobs/<id>/report has
                        its last byte flipped (same length, so only a
                        digest check sees it)

  board_proxy.py --to PORT --port-file FILE [--corrupt-downloads]

It serves until killed; --port-file gets its port (0 = a free one)."""
import argparse, http.client, http.server, os, socketserver, sys

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length",
       "proxy-connection", "te", "trailer", "upgrade"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--corrupt-downloads", action="store_true")
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def body(self):
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                out = b""
                while True:
                    n = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if n == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return out
                    out += self.rfile.read(n)
                    self.rfile.readline()
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def forward(self):
            data = self.body()
            up = http.client.HTTPConnection("127.0.0.1", args.to, timeout=120)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            if data or self.command in ("POST", "PUT"):
                hdrs["Content-Length"] = str(len(data))
            up.request(self.command, self.path, body=data, headers=hdrs)
            r = up.getresponse()
            out = r.read()
            path = self.path.split("?")[0]
            download = path.startswith("/v1/blobs/") or (
                path.startswith("/v1/jobs/") and path.endswith(("/result", "/report")))
            if args.corrupt_downloads and self.command == "GET" and r.status == 200 \
                    and download and out:
                out = out[:-1] + bytes([out[-1] ^ 0x01])
            self.send_response(r.status, r.reason)
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(out)
            up.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
