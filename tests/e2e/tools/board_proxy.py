#!/usr/bin/python3
"""board_proxy.py: an HTTP proxy on 127.0.0.1 in front of one board agent,
for tests that need a board that lies. Every request is passed on as it
came (method, path, headers, body) and every answer passed back, except:

  --corrupt-downloads   the answer to a GET of /v1/blobs/<digest>,
                        /v1/jobs/<id>/result or /v1/jobs/<id>/report has
                        its last byte flipped (same length, so only a
                        digest check sees it)
  --result FILE         GET /v1/jobs/<id>/result answers FILE's bytes, and
                        a succeeded job's JSON names their digest
  --stream-result N     GET /v1/jobs/<id>/result streams N bytes (chunked)
  --merge-job JSON      a succeeded job's JSON gets JSON's keys (replaced)
  --fail-job JSON       a succeeded job's JSON says failed, error JSON
  --hold FILE           POST /v1/jobs waits while FILE exists
  --down-while FILE     every request answers 503 while FILE exists

  board_proxy.py --to PORT --port-file FILE [options above]

It serves until killed; --port-file gets its port (0 = a free one)."""
import argparse, hashlib, http.client, http.server, json, os, re, socketserver, sys, time

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length",
       "proxy-connection", "te", "trailer", "upgrade"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--corrupt-downloads", action="store_true")
    ap.add_argument("--result")
    ap.add_argument("--stream-result", type=int)
    ap.add_argument("--merge-job")
    ap.add_argument("--fail-job")
    ap.add_argument("--hold")
    ap.add_argument("--down-while")
    args = ap.parse_args()
    fake = open(args.result, "rb").read() if args.result else None

    def rewrite_job(out):
        """A job JSON answer as the options say (only succeeded ones)."""
        try:
            job = json.loads(out)
        except ValueError:
            return out
        if not isinstance(job, dict) or job.get("state") != "succeeded":
            return out
        if fake is not None:
            job["result"] = hashlib.sha256(fake).hexdigest()
        if args.merge_job:
            job.update(json.loads(args.merge_job))
        if args.fail_job:
            job.update(state="failed", result=None, report=None, failure="model",
                       error=json.loads(args.fail_job))
        return json.dumps(job).encode()

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

        def stream(self, n):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            block = b"\0" * 65536
            try:
                while n > 0:
                    k = min(n, len(block))
                    self.wfile.write(b"%x\r\n" % k + block[:k] + b"\r\n")
                    n -= k
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass        # the lab hung up: what it should do

        def forward(self):
            data = self.body()
            if args.down_while and os.path.exists(args.down_while):
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = self.path.split("?")[0]
            result = path.startswith("/v1/jobs/") and path.endswith("/result")
            if self.command == "GET" and result and args.stream_result:
                return self.stream(args.stream_result)
            while args.hold and self.command == "POST" and path == "/v1/jobs" \
                    and os.path.exists(args.hold):
                time.sleep(0.05)
            up = http.client.HTTPConnection("127.0.0.1", args.to, timeout=120)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            if data or self.command in ("POST", "PUT"):
                hdrs["Content-Length"] = str(len(data))
            up.request(self.command, self.path, body=data, headers=hdrs)
            r = up.getresponse()
            out = r.read()
            if r.status == 200 and self.command == "GET" and result and fake is not None:
                out = fake
            elif re.fullmatch(r"/v1/jobs(/[0-9a-f]+)?", path):
                out = rewrite_job(out)
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
