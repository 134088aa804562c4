#!/usr/bin/python3
"""cachescale.py: the cache's costs as its state grows (issue 14, part 7),
in `make stress`. A benchmark, never a test: it asserts nothing about
speed, only that every request it makes succeeds.

Fills one daemon's cache with tiny_mlp artifacts of distinct weights
(written with numpy in this process, uploaded and compiled over the Unix
socket, two connections kept alive) and at each checkpoint (100, 1,000,
10,000, 30,000 artifacts by default) prints one row:

  restart->health   a copy of the cache (then a sync) restarted with
                    --cache-max at half its blob bytes: until GET /v1/health
                    answers
  restart->evicted  until the eviction that brings it under is done (GET
                    /v1/cache "evicting" false; a daemon without the field
                    evicts before it listens: the same as restart->health)
  health, cache, metrics, ls 50
                    GET /v1/health, GET /v1/cache, GET /metrics and
                    `eulernpu cache ls --limit 50` on the full cache (median
                    of 5)
  compile@bound     a compile of new weights on the bounded copy once its
                    eviction is done: upload and compile, each past the
                    bound (median of 3)

  CACHESCALE_POINTS="100 1000 10000 30000"  the checkpoints
  CACHESCALE_EVICT_MAX=600                  seconds the eviction may take
                                            before the row says "> N s"
  ENPU_BIN=bin                              the daemon and client to measure
Usage: tests/bench/cachescale.py   (from the repository root, after make)
"""
import hashlib
import http.client
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, os.environ.get("ENPU_BIN", "bin"))
POINTS = [int(x) for x in os.environ.get("CACHESCALE_POINTS", "100 1000 10000 30000").split()]
EVICT_MAX = float(os.environ.get("CACHESCALE_EVICT_MAX", "600"))
EX = os.path.join(ROOT, "examples", "tiny_mlp")


class UConn(http.client.HTTPConnection):
    """HTTP/1.1 over the daemon's Unix socket, kept alive."""

    def __init__(self, path, timeout=600):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(conn, method, path, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    return r.status, data


class Daemon:
    def __init__(self, work, name, cache, *args):
        self.sock = os.path.join(work, name + ".sock")
        self.log = os.path.join(work, name + ".log")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "eulernpud"), "--socket", self.sock, "--cache", cache,
             "--log", self.log, *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_health(self, limit):
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            if self.proc.poll() is not None:
                raise SystemExit("cachescale: the daemon exited; see " + self.log)
            try:
                c = UConn(self.sock, timeout=5)
                st, _ = call(c, "GET", "/v1/health")
                c.close()
                if st == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.005)
        return False

    def stop(self, kill=False):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.proc.wait(timeout=600)


def weights(i, base):
    """tiny_mlp's weights with fc1.b[0] moved by i: a distinct blob each."""
    w = {k: v.copy() for k, v in base.items()}
    w["fc1.b"][0] += np.float32(i) * np.float32(1e-3)
    b = io.BytesIO()
    np.savez(b, **w)
    return b.getvalue()


def compile_one(conn, spec_d, blob):
    d = hashlib.sha256(blob).hexdigest()
    st, body = call(conn, "PUT", "/v1/blobs/" + d, blob)
    if st not in (200, 201):
        raise SystemExit("cachescale: PUT blob: %d %s" % (st, body[:200]))
    st, body = call(conn, "POST", "/v1/compile", json.dumps({"spec": spec_d, "weights": d}),
                    {"Content-Type": "application/json"})
    if st != 200:
        raise SystemExit("cachescale: compile: %d %s" % (st, body[:200]))


def fill(sock, spec_d, base, lo, hi):
    """Artifacts lo..hi-1, over two connections."""
    errs = []

    def part(k):
        c = UConn(sock)
        try:
            for i in range(lo + k, hi, 2):
                compile_one(c, spec_d, weights(i, base))
        except BaseException as e:   # noqa: B902 (reported below)
            errs.append(e)
        c.close()

    ts = [threading.Thread(target=part, args=(k,)) for k in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise errs[0]


def med_ms(fn, n):
    v = []
    for _ in range(n):
        t0 = time.monotonic()
        fn()
        v.append((time.monotonic() - t0) * 1000)
    v.sort()
    return v[len(v) // 2]


def get_ok(sock, path):
    c = UConn(sock)
    st, body = call(c, "GET", path)
    c.close()
    if st != 200:
        raise SystemExit("cachescale: GET %s: %d" % (path, st))
    return body


def reads(sock):
    env = dict(os.environ, EULERNPU_SERVER="unix:" + sock)
    cli = [os.path.join(BIN, "eulernpu"), "cache", "ls", "--limit", "50"]

    def ls():
        subprocess.run(cli, env=env, check=True, stdout=subprocess.DEVNULL)
    return (med_ms(lambda: get_ok(sock, "/v1/health"), 5), med_ms(lambda: get_ok(sock, "/v1/cache"), 5),
            med_ms(lambda: get_ok(sock, "/metrics"), 5), med_ms(ls, 5))


def bounded_restart(work, cache, spec, spec_d, base, n, half):
    """restart->health, restart->evicted (None past EVICT_MAX), compile@bound."""
    copy = os.path.join(work, "bounded.cache")
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", cache, copy], check=True)
    # A restart on a real machine does not follow a fresh copy of its
    # cache: without a sync, the writeback and journal traffic of the copy
    # (~270,000 files at 30,000 artifacts) competes with the daemon's
    # start-up and is measured as its own. The page cache stays warm.
    subprocess.run(["sync"], check=True)
    t0 = time.monotonic()
    d = Daemon(work, "bounded", copy, "--cache-max", str(half))
    if not d.wait_health(EVICT_MAX):
        d.stop(kill=True)
        shutil.rmtree(copy, ignore_errors=True)
        return None, None, None
    t_health = time.monotonic() - t0
    t_done = None
    while time.monotonic() - t0 < EVICT_MAX:
        if not json.loads(get_ok(d.sock, "/v1/cache")).get("evicting", False):
            t_done = time.monotonic() - t0
            break
        time.sleep(0.02)
    comp = None
    if t_done is not None:
        c = UConn(d.sock)
        k = [10 ** 7 + n * 10 + j for j in range(3)]

        def new_compile():
            # the spec may have been evicted: a client uploads what is missing
            call(c, "PUT", "/v1/blobs/" + spec_d, spec)
            compile_one(c, spec_d, weights(k.pop(), base))
        comp = med_ms(new_compile, 3)
        c.close()
    d.stop(kill=t_done is None)
    shutil.rmtree(copy, ignore_errors=True)
    return t_health, t_done, comp


def fmt_s(v):
    return "> %d s" % EVICT_MAX if v is None else ("%.2f s" % v if v >= 1 else "%.0f ms" % (v * 1000))


def main():
    work = tempfile.mkdtemp(prefix="enpu-cachescale.")
    cache = os.path.join(work, "fill.cache")
    base = dict(np.load(os.path.join(EX, "weights.npz")))
    spec = open(os.path.join(EX, "spec.yaml"), "rb").read()
    spec_d = hashlib.sha256(spec).hexdigest()
    rows = []
    head = "| artifacts | restart->health | restart->evicted | health | cache | metrics | ls 50 | compile@bound |"
    try:
        have = 0
        for n in POINTS:
            d = Daemon(work, "fill", cache)
            d.wait_health(600)
            c = UConn(d.sock)
            st, body = call(c, "PUT", "/v1/blobs/" + spec_d, spec)
            c.close()
            t0 = time.monotonic()
            fill(d.sock, spec_d, base, have, n)
            t_fill = time.monotonic() - t0
            have = n
            h, ca, me, ls = reads(d.sock)
            half = max(1, json.loads(get_ok(d.sock, "/v1/cache"))["blob_bytes"] // 2)
            d.stop()
            rh, rd, comp = bounded_restart(work, cache, spec, spec_d, base, n, half)
            row = "| %d | %s | %s | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %s |" % (
                n, fmt_s(rh), fmt_s(rd), h, ca, me, ls, "n/a" if comp is None else "%.1f ms" % comp)
            rows.append(row)
            print("cachescale: %d artifacts (filled in %.1f s): %s" % (n, t_fill, row), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\ncache scale (%s)\n" % BIN)
    print(head)
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(r)
    print("\n1 passed, 0 failed")


if __name__ == "__main__":
    main()
