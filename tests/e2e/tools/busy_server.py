#!/usr/bin/env python3
"""busy_server.py: a fake eulernpud for tests/e2e/ci.sh that answers "busy"
a set number of times before answering for real, to test the client's
retries of 429 and 503 without timing anything.

  busy_server.py PORTFILE LOGFILE BODYFILE PLAN

PLAN is a comma-separated list of answers given in order, one per request,
each STATUS or STATUS:RETRY-AFTER; RETRY-AFTER is a number of seconds, or
"date+N" for an HTTP date N seconds from now. Once the plan is used up every
request gets 200 with BODYFILE's bytes (application/json). "never" as the
whole plan answers 429 (Retry-After: 1) forever. Each request is appended to
LOGFILE as "METHOD PATH". Busy answers carry eulernpud's error object.
"""
import email.utils
import http.server
import os
import sys
import threading
import time

port_file, log_file, body_file, plan_text = sys.argv[1:5]
plan = [] if plan_text in ("", "none") else plan_text.split(",")
lock = threading.Lock()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        with lock:
            with open(log_file, "a") as f:
                f.write("%s %s\n" % (self.command, self.path))
            step = "429:1" if plan_text == "never" else (plan.pop(0) if plan else None)
        if step is None:
            body = open(body_file, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        status, _, ra = step.partition(":")
        code = "E0806" if status == "429" else "E0808"
        body = ('{"error":{"code":"%s","message":"busy","where":"","fix":""}}' % code).encode()
        self.send_response(int(status))
        if ra.startswith("date+"):
            ra = email.utils.formatdate(time.time() + int(ra[5:]), usegmt=True)
        if ra:
            self.send_header("Retry-After", ra)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = answer


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
