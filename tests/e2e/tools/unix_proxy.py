#!/usr/bin/python3
"""unix_proxy.py: an HTTP proxy on a Unix socket in front of a daemon's
Unix socket, for client tests that need a server whose downloads go wrong.
Every request is passed on as it came and every answer passed back, except
that the answer to a GET whose path matches --corrupt REGEX has its last
byte flipped (same length: only the client's digest check sees it), and
that it answers as a server that is not the client's own would: without
the "local" paths in its cache that POST /v1/compile gives the daemon's
own user (so that the client downloads the files).

  unix_proxy.py --to SOCK --listen SOCK --corrupt REGEX

It serves until killed; --listen exists once it accepts connections."""
import argparse, http.client, http.server, os, re, socket, socketserver

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class UnixConn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=120)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--to", required=True)
    ap.add_argument("--listen", required=True)
    ap.add_argument("--corrupt", required=True)
    args = ap.parse_args()
    corrupt = re.compile(args.corrupt)

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def address_string(self):
            return "unix"

        def log_message(self, *a):
            pass

        def relay(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            c = UnixConn(args.to)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            c.request(self.command, self.path, body=body, headers=hdrs)
            r = c.getresponse()
            data = r.read()
            if r.getheader("Content-Type", "").startswith("application/json") and b'"local"' in data:
                data = re.sub(rb',? *"local": *"[^"]*"', b"", data)
            if self.command == "GET" and r.status == 200 and data and corrupt.search(self.path):
                data = data[:-1] + bytes([data[-1] ^ 1])
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            c.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay

    if os.path.exists(args.listen):
        os.unlink(args.listen)
    Server(args.listen, H).serve_forever()


if __name__ == "__main__":
    main()
