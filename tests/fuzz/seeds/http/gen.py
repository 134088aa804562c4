#!/usr/bin/python3
# gen.py: writes the seed corpus of tests/fuzz/fuzz_http.c: one file per kind
# of request, the bytes curl or eulernpu would send on one connection. Run
# from anywhere: /usr/bin/python3 tests/fuzz/seeds/http/gen.py [--artifact ID]
#
# Blobs are named by the SHA-256 of examples/tiny_mlp's files; the artifacts
# by the ids tiny_mlp compiles to on cpu_ref and npu_sim, which this script
# asks a bin/eulernpud for (started on a temporary socket, stopped after)
# unless --artifacts CPU_REF_ID NPU_SIM_ID gives them. fuzz_http.c's
# SEED_ARTIFACT and SEED_ARTIFACT_NPU must be the same ids. Job
# ids are random: JOB_ID_KNOWN_000 (a succeeded job) and JOB_ID_FAILED_00 (a
# failed one) stand for them; the harness puts the real ids in.
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
EX = os.path.join(ROOT, "examples", "tiny_mlp")
JOB_OK = "JOB_ID_KNOWN_000"
JOB_FAILED = "JOB_ID_FAILED_00"
UA = "User-Agent: curl/7.88.1\r\nAccept: */*\r\n"
BOUNDARY = "------------------------d74496d66958873e"


def read(name):
    with open(os.path.join(EX, name), "rb") as f:
        return f.read()


SPEC, WEIGHTS, INPUT, GOLDEN = (read(n) for n in ("spec.yaml", "weights.npz", "input.npz", "golden.npz"))
SHA = lambda b: hashlib.sha256(b).hexdigest()
SPEC_D, WEIGHTS_D, INPUT_D = SHA(SPEC), SHA(WEIGHTS), SHA(INPUT)
ABSENT = "0" * 63 + "1"           # well-formed, on no server
TARGET = b"array: [8, 8]\ndataflow: ws\nsram_kib: {ifmap: 64, filter: 64, ofmap: 64}\n"


def artifact_id():
    """Compile tiny_mlp with bin/eulernpud and curl: the two ids, the cpu_ref manifest."""
    d = tempfile.mkdtemp(prefix="fzgen.")
    sock = os.path.join(d, "d.sock")
    daemon = subprocess.Popen([os.path.join(ROOT, "bin", "eulernpud"), "--config", "none",
                               "--socket", sock, "--cache", os.path.join(d, "cache"),
                               "--log", os.path.join(d, "log")])
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        arts = []
        for backend in ("cpu_ref", "npu_sim"):
            out = subprocess.run(["curl", "-sS", "--max-time", "30", "--unix-socket", sock,
                                  "-F", "spec=@" + os.path.join(EX, "spec.yaml"),
                                  "-F", "weights=@" + os.path.join(EX, "weights.npz"),
                                  "-F", "backend=" + backend, "http://localhost/v1/compile"],
                                 check=True, capture_output=True).stdout
            arts.append(json.loads(out)["artifact"])
        art = arts[0]
        manifest = subprocess.run(["curl", "-sS", "--max-time", "30", "--unix-socket", sock,
                                   "http://localhost/v1/artifacts/" + art],
                                  check=True, capture_output=True).stdout
        return arts, manifest
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        subprocess.run(["rm", "-rf", d])


def req(method, path, body=b"", headers="", ctype=None, length=True):
    h = "%s %s HTTP/1.1\r\nHost: localhost\r\n%s" % (method, path, UA)
    if ctype:
        h += "Content-Type: %s\r\n" % ctype
    if body and length:
        h += "Content-Length: %d\r\n" % len(body)
    h += headers
    return h.encode() + b"\r\n" + body


def jbody(o):
    return json.dumps(o, separators=(",", ":")).encode()


def post_json(path, o, **kw):
    return req("POST", path, jbody(o), ctype="application/json", **kw)


def multipart(fields, files):
    """curl -F name=value ... -F name=@file: fields [(k, v)], files [(k, filename, bytes)]."""
    out = b""
    for k, v in fields:
        out += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                % (BOUNDARY, k, v)).encode()
    for k, fn, data in files:
        out += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n" % (BOUNDARY, k, fn)).encode()
        out += data + b"\r\n"
    return out + ("--%s--\r\n" % BOUNDARY).encode()


def post_form(path, fields, files, headers=""):
    return req("POST", path, multipart(fields, files), headers=headers,
               ctype="multipart/form-data; boundary=" + BOUNDARY)


def chunked(body, size=64):
    out = b""
    for i in range(0, len(body), size):
        part = body[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


def seeds(arts, manifest):
    art, art_npu = arts
    s = {}
    # plain reads
    s["get_health"] = req("GET", "/v1/health")
    s["get_health_http10"] = b"GET /v1/health HTTP/1.0\r\n\r\n"
    s["head_health"] = req("HEAD", "/v1/health")
    s["get_health_token_rid"] = req("GET", "/v1/health", headers="Authorization: Bearer "
                                    "s3cr3t-token\r\nX-Request-Id: 0123456789abcdef\r\n")
    s["get_backends"] = req("GET", "/v1/backends")
    s["get_metrics"] = req("GET", "/metrics")
    s["get_boards"] = req("GET", "/v1/boards")
    s["get_cache"] = req("GET", "/v1/cache")
    s["get_cache_entries"] = req("GET", "/v1/cache/entries?kind=blob&limit=5")
    s["get_cache_entries_ac"] = req("GET", "/v1/cache/entries?kind=ac&limit=0")
    s["post_cache_gc_verify"] = req("POST", "/v1/cache/gc?verify=1")
    s["delete_cache_entry_absent"] = req("DELETE", "/v1/cache/entries/" + ABSENT)
    s["delete_cache_entry_input"] = req("DELETE", "/v1/cache/entries/" + INPUT_D)
    s["get_jobs_list"] = req("GET", "/v1/jobs?state=succeeded,failed&backend=cpu_ref&limit=5")
    s["get_jobs_list_bad"] = req("GET", "/v1/jobs?state=queued,bogus&backend=npu&limit=0")
    s["not_found"] = req("GET", "/v2/nothing/here?x=%zz&&=")
    s["method_not_allowed"] = req("PATCH", "/v1/jobs")
    s["options_star"] = req("OPTIONS", "*")
    # blobs
    s["get_blob_spec"] = req("GET", "/v1/blobs/" + SPEC_D)
    s["head_blob_input"] = req("HEAD", "/v1/blobs/" + INPUT_D)
    s["get_blob_absent"] = req("GET", "/v1/blobs/" + ABSENT)
    s["get_blob_not_hex"] = req("GET", "/v1/blobs/" + SPEC_D.upper())
    body = b"hello from the fuzzer\n"
    s["put_blob_right"] = req("PUT", "/v1/blobs/" + SHA(body), body,
                              ctype="application/octet-stream", headers="Expect:\r\n")
    s["put_blob_wrong_digest"] = req("PUT", "/v1/blobs/" + SPEC_D, body,
                                     ctype="application/octet-stream")
    s["put_blob_existing"] = req("PUT", "/v1/blobs/" + INPUT_D, INPUT,
                                 ctype="application/octet-stream")
    s["put_blob_not_hex"] = req("PUT", "/v1/blobs/xyz", body, ctype="application/octet-stream")
    s["put_blob_chunked"] = req("PUT", "/v1/blobs/" + SHA(body), chunked(body, 5),
                                ctype="application/octet-stream",
                                headers="Transfer-Encoding: chunked\r\n", length=False)
    s["post_blobs_missing"] = post_json("/v1/blobs/missing",
                                        {"digests": [SPEC_D, WEIGHTS_D, ABSENT]})
    s["post_blobs_missing_bad"] = post_json("/v1/blobs/missing", {"digests": [1, "x"]})
    # validate
    s["post_validate_raw"] = req("POST", "/v1/validate?name=spec.yaml&backend=npu_sim", SPEC,
                                 ctype="application/x-yaml")
    s["post_validate_json"] = post_json("/v1/validate", {"spec": SPEC_D, "spec_name": "spec.yaml",
                                                         "backend": "fpga_board"})
    s["post_validate_form"] = post_form("/v1/validate", [("backend", "npu_sim")],
                                        [("spec", "spec.yaml", SPEC), ("target", "t.yaml", TARGET)])
    s["post_validate_bad_yaml"] = req("POST", "/v1/validate", b"eulernpu: 1\nname: [&a x, *a, *b\n",
                                      ctype="text/plain")
    # compile
    s["post_compile_json"] = post_json("/v1/compile", {"spec": SPEC_D, "spec_name": "spec.yaml",
                                                       "weights": WEIGHTS_D,
                                                       "weights_name": "weights.npz",
                                                       "backend": "cpu_ref"})
    s["post_compile_json_npusim"] = post_json("/v1/compile", {"spec": SPEC_D, "weights": WEIGHTS_D,
                                                              "backend": "npu_sim"})
    s["post_compile_json_zynq"] = post_json("/v1/compile", {"spec": SPEC_D, "weights": WEIGHTS_D,
                                                            "backend": "zynq_ps"})
    s["post_compile_missing_blob"] = post_json("/v1/compile", {"spec": SPEC_D, "weights": ABSENT})
    s["post_compile_form"] = post_form("/v1/compile", [],
                                       [("spec", "examples/tiny_mlp/spec.yaml", SPEC),
                                        ("weights", "weights.npz", WEIGHTS)])
    s["post_compile_form_target"] = post_form("/v1/compile", [("backend", "npu_sim")],
                                              [("spec", "spec.yaml", SPEC),
                                               ("weights", "weights.npz", WEIGHTS),
                                               ("target", "target.yaml", TARGET)])
    s["post_compile_chunked"] = req("POST", "/v1/compile",
                                    chunked(jbody({"spec": SPEC_D, "weights": WEIGHTS_D}), 16),
                                    ctype="application/json",
                                    headers="Transfer-Encoding: chunked\r\n", length=False)
    s["post_compile_urlencoded"] = req("POST", "/v1/compile", b"spec=%s&weights=%s" %
                                       (SPEC_D.encode(), WEIGHTS_D.encode()),
                                       ctype="application/x-www-form-urlencoded")
    s["post_compile_deep_json"] = req("POST", "/v1/compile", b'{"spec":' + b"[" * 40 + b"]" * 40
                                      + b"}", ctype="application/json")
    s["post_compile_too_large"] = req("POST", "/v1/compile", b"{}", ctype="application/json",
                                      headers="Content-Length: 999999999999\r\n", length=False)
    s["post_compile_form_no_boundary"] = req("POST", "/v1/compile", b"--x\r\n\r\n",
                                             ctype="multipart/form-data")
    s["post_compile_form_path_name"] = post_form("/v1/compile", [("spec_name", "a\x01b")],
                                                 [("spec", "../../etc/passwd", SPEC),
                                                  ("weights", "/", WEIGHTS)])
    # jobs
    s["post_jobs_json_wait"] = post_json("/v1/jobs?wait=5", {"artifact": art, "input": INPUT_D,
                                                             "input_name": "input.npz",
                                                             "priority": "high", "timeout": 5})
    s["post_jobs_npusim_wait"] = post_json("/v1/jobs?wait=5", {"artifact": art_npu,
                                                                "input": INPUT_D})
    s["post_jobs_json_detach"] = post_json("/v1/jobs", {"artifact": art, "input": INPUT_D,
                                                        "priority": "low"})
    s["post_jobs_form_wait"] = post_form("/v1/jobs?wait=5", [("artifact", art)],
                                         [("input", "input.npz", INPUT)])
    s["post_jobs_expect_100"] = post_json("/v1/jobs?wait=5", {"artifact": art, "input": INPUT_D},
                                          headers="Expect: 100-continue\r\n")
    s["post_jobs_bad_fields"] = post_json("/v1/jobs?wait=-1", {"artifact": art, "input": INPUT_D,
                                                               "priority": "urgent",
                                                               "timeout": "1e9"})
    s["post_jobs_negative_timeout"] = post_json("/v1/jobs?wait=5", {"artifact": art, "input": INPUT_D,
                                                                    "timeout": -1e18})
    s["post_jobs_absent_artifact"] = post_json("/v1/jobs", {"artifact": ABSENT, "input": INPUT_D})
    s["get_job_ok"] = req("GET", "/v1/jobs/%s?wait=1" % JOB_OK)
    s["get_job_failed"] = req("GET", "/v1/jobs/" + JOB_FAILED)
    s["get_job_unknown"] = req("GET", "/v1/jobs/0000000000000000?wait=2")
    s["get_job_result"] = req("GET", "/v1/jobs/%s/result" % JOB_OK)
    s["get_job_report"] = req("GET", "/v1/jobs/%s/report" % JOB_OK)
    s["get_job_failed_result"] = req("GET", "/v1/jobs/%s/result" % JOB_FAILED)
    s["get_job_events"] = req("GET", "/v1/jobs/%s/events" % JOB_OK,
                              headers="Accept: text/event-stream\r\n")
    s["get_job_events_failed"] = req("GET", "/v1/jobs/%s/events" % JOB_FAILED)
    s["delete_job_ok"] = req("DELETE", "/v1/jobs/" + JOB_OK)
    s["delete_job_unknown"] = req("DELETE", "/v1/jobs/ffffffffffffffff")
    # artifacts
    s["get_artifact"] = req("GET", "/v1/artifacts/" + art)
    s["get_artifact_graph"] = req("GET", "/v1/artifacts/%s/files/graph.json" % art)
    s["get_artifact_plan"] = req("GET", "/v1/artifacts/%s/files/plan.json" % art)
    s["get_artifact_manifest"] = req("GET", "/v1/artifacts/%s/files/manifest.json" % art)
    s["get_artifact_traversal"] = req("GET", "/v1/artifacts/%s/files/../../cas/x" % art)
    s["get_artifact_absent"] = req("GET", "/v1/artifacts/%s/files/graph.json" % ABSENT)
    s["put_artifact_manifest"] = req("PUT", "/v1/artifacts/" + art, manifest,
                                     ctype="application/json")
    s["put_artifact_bad"] = req("PUT", "/v1/artifacts/" + ABSENT,
                                b'{"files":[{"path":"../x","sha256":"%s","bytes":1}]}'
                                % INPUT_D.encode(), ctype="application/json")
    # compare
    s["post_compare_json"] = post_json("/v1/compare", {"got": INPUT_D, "expected": INPUT_D,
                                                       "tol": 1e-5, "rtol": 0, "exact": True})
    s["post_compare_form"] = post_form("/v1/compare", [("tol", "1e-5"), ("exact", "no")],
                                       [("got", "input.npz", INPUT),
                                        ("expected", "golden.npz", GOLDEN)])
    s["post_compare_bad_tol"] = req("POST", "/v1/compare", b'{"got":"%s","expected":"%s",'
                                    b'"tol":NaN,"rtol":-Infinity}' % (INPUT_D.encode(),
                                                                      INPUT_D.encode()),
                                    ctype="application/json")
    # framing
    s["pipelined"] = (req("GET", "/v1/health") + req("GET", "/v1/jobs/" + JOB_OK)
                      + post_json("/v1/validate", {"spec": SPEC_D}))
    s["body_shorter_than_length"] = req("POST", "/v1/compile", jbody({"spec": SPEC_D}),
                                        ctype="application/json",
                                        headers="Content-Length: 400\r\n", length=False)
    s["body_longer_than_length"] = req("POST", "/v1/validate", jbody({"spec": SPEC_D}) +
                                       b"GARBAGE / HTTP/1.1\r\n\r\n", ctype="application/json",
                                       headers="Content-Length: 10\r\n", length=False)
    s["length_and_chunked"] = req("POST", "/v1/blobs/missing", chunked(b'{"digests":[]}'),
                                  ctype="application/json",
                                  headers="Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                                  length=False)
    s["bad_chunk_size"] = req("POST", "/v1/compile", b"fffffffffffffffff\r\nx\r\n0\r\n\r\n",
                              ctype="application/json",
                              headers="Transfer-Encoding: chunked\r\n", length=False)
    s["garbage"] = b"\x00\xffGET\t/v1/health HTTP/9.9\n\n"
    # past the harness's limits while streaming (no Content-Length to refuse
    # up front): also makes libFuzzer's -max_len large enough to get there
    big = bytes(range(256)) * 48
    s["put_blob_chunked_over_max_upload"] = req("PUT", "/v1/blobs/" + SHA(big), chunked(big, 4096),
                                                ctype="application/octet-stream",
                                                headers="Transfer-Encoding: chunked\r\n",
                                                length=False)
    s["post_compile_chunked_over_max_json"] = req("POST", "/v1/compile", chunked(
        jbody({"spec": SPEC_D, "weights": WEIGHTS_D, "spec_name": "x" * 6000}), 1000),
        ctype="application/json", headers="Transfer-Encoding: chunked\r\n", length=False)
    return s


def main():
    args = sys.argv[1:]
    if args[:1] == ["--artifacts"] and len(args) == 3:
        arts, manifest = args[1:], b'{"files":[]}'
    else:
        arts, manifest = artifact_id()
    old = [f for f in os.listdir(HERE) if f != "gen.py"]
    for f in old:
        os.unlink(os.path.join(HERE, f))
    made = seeds(arts, manifest)
    for name, data in sorted(made.items()):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    print("artifacts %s (cpu_ref) %s (npu_sim); %d seeds in %s" % (arts[0], arts[1], len(made),
                                                                   HERE))


if __name__ == "__main__":
    main()
