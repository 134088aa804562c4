/* api.h: the REST contract (v1) shared by eulernpud and eulernpu: paths,
 * query parameters, JSON field names, and header names. proto/openapi.yaml
 * describes the same routes for people and for curl.
 *
 * Error bodies, every route: {"error": {"code": "E0301", "title": "...",
 * "message": "...", "where": "...", "fix": "...", "see": "eulernpu explain E0301"}}
 * with the HTTP status of the code's catalogue entry (common/err.c). */
#ifndef ENPU_API_H
#define ENPU_API_H

#define API_PREFIX            "/v1"
#define API_HEALTH            "/v1/health"
#define API_BACKENDS          "/v1/backends"
#define API_BLOBS_MISSING     "/v1/blobs/missing"
#define API_BLOBS             "/v1/blobs/"        /* + sha256 */
#define API_VALIDATE          "/v1/validate"
#define API_COMPILE           "/v1/compile"
#define API_IMPORT            "/v1/import"        /* ONNX model -> spec + weights */
#define API_ARTIFACTS         "/v1/artifacts/"    /* + id [+ "/files/" + path] */
#define API_ARTIFACT_FILES    "/files/"
#define API_JOBS              "/v1/jobs"          /* POST; GET/DELETE /v1/jobs/{id} */
#define API_JOB_RESULT        "/result"           /* GET /v1/jobs/{id}/result */
#define API_JOB_REPORT        "/report"           /* GET /v1/jobs/{id}/report */
#define API_COMPARE           "/v1/compare"
#define API_JOB_EVENTS        "/events"           /* GET /v1/jobs/{id}/events: server-sent events */
#define API_CACHE             "/v1/cache"         /* GET: stats */
#define API_CACHE_ENTRIES     "/v1/cache/entries" /* GET: list; DELETE /v1/cache/entries/{digest or artifact id} */
#define API_CACHE_GC          "/v1/cache/gc"      /* POST: evict down to --cache-max, drop unreferenced temp files */
#define API_BOARDS            "/v1/boards"
#define API_EVENTS            "/v1/events"        /* GET: server-sent events of all jobs, status */
#define API_MODELS            "/v1/models"        /* GET: list; GET/DELETE /v1/models/{name} */
#define API_MODEL_VERSIONS    "/versions"         /* POST /v1/models/{name}/versions (the next);
						   * PUT/DELETE .../versions/{v} */

/* The Open Inference Protocol v2 (KServe, Triton), routes_oip.c. */
#define API_ROOT              "/"                 /* GET: the status page (index.html) */
#define API_UI                "/ui/"              /* GET /ui/{file}: its other files */
#define API_V2                "/v2"               /* GET: server metadata */
#define API_V2_LIVE           "/v2/health/live"
#define API_V2_READY          "/v2/health/ready"
#define API_V2_MODELS         "/v2/models"        /* + /{name}[/versions/{v}] */
#define API_V2_VERSIONS       "/versions"
#define API_V2_MODEL_READY    "/ready"
#define API_V2_INFER          "/infer"
#define API_V2_REPO_INDEX     "/v2/repository/index"
#define H_INFER_HEADER_LEN    "Inference-Header-Content-Length"
#define F_CODE                "code"
#define F_DATATYPE            "datatype"
#define F_DATA                "data"
#define F_PARAMETERS          "parameters"
#define F_PLATFORM            "platform"
#define F_EXTENSIONS          "extensions"
#define F_LIVE                "live"
#define F_MODEL_VERSION       "model_version"
#define F_REASON              "reason"
#define F_BINARY_DATA         "binary_data"
#define F_BINARY_DATA_SIZE    "binary_data_size"
#define F_BINARY_DATA_OUTPUT  "binary_data_output"

#define F_HEALTH              "health"    /* /v1/events' status event */
#define F_CACHE               "cache"
#define F_METRICS             "metrics"   /* its job figures (metrics.c) */
#define F_DONE                "done"      /* jobs finished, by final state */
#define F_LE                  "le"        /* the histograms' bucket bounds (s) */
#define F_QUEUE_S             "queue_s"   /* {"buckets" (per bucket), "count", "sum"} */
#define F_RUN_S               "run_s"
#define F_BUCKETS             "buckets"
#define F_COUNT               "count"
#define F_SUM                 "sum"
#define F_ADMIN               "admin"     /* /v1/events' hello event: {"name", "admin", "seq"} */
#define F_SEQ                 "seq"
#define F_SINCE               "since"     /* a board's state, since when */

/* Query parameters. */
#define Q_WAIT                "wait"      /* seconds to long-poll for a job to finish */
#define Q_SINCE               "since"     /* /v1/events: resume after this change (Last-Event-ID) */

/* Request fields (JSON bodies and multipart part names alike). Files are
 * given either as the digest of an uploaded blob (JSON) or as a multipart
 * file part of the same name. *_name fields carry the user's file name for
 * error messages ("examples/tiny_mlp/spec.yaml:9:7"). */
#define F_SPEC                "spec"
#define F_SPEC_NAME           "spec_name"
#define F_WEIGHTS             "weights"
#define F_WEIGHTS_NAME        "weights_name"
#define F_BACKEND             "backend"
#define F_ARTIFACT            "artifact"
#define F_INPUT               "input"
#define F_INPUT_NAME          "input_name"
#define F_GOT                 "got"
#define F_GOT_NAME            "got_name"
#define F_EXPECTED            "expected"
#define F_EXPECTED_NAME       "expected_name"
#define F_TOL                 "tol"
#define F_RTOL                "rtol"
#define F_EXACT               "exact"
#define F_TARGET              "target"    /* compile/validate: a target YAML (npu_sim options) */
#define F_TARGET_NAME         "target_name"
#define F_DIGESTS             "digests"   /* POST /v1/blobs/missing */
#define F_MISSING             "missing"
#define F_MODEL               "model"     /* import: the .onnx blob; a job: name[:version] */
#define F_MODELS              "models"
#define F_VERSIONS            "versions"
#define F_LATEST              "latest"    /* a model's highest ready version */
#define F_DEPLOYED            "deployed"
#define F_READY               "ready"
#define F_MODEL_NAME          "model_name"
#define F_EXTERNAL            "external"  /* import: {"<location>": digest} of external data */
#define F_INPUTS              "inputs"    /* import: {"NAME": [dims]}; answer: [{name, shape}] */

/* Response fields. */
#define F_OKAY                "ok"
#define F_ERROR               "error"
#define F_ID                  "id"
#define F_STATE               "state"
#define F_CACHED              "cached"
#define F_PL_OPS              "pl_ops"       /* fpga_board: ops the partition puts on the PL */
#define F_PS_OPS              "ps_ops"       /* ... and on the PS */
#define F_PL_SEGMENTS         "pl_segments"
#define F_OPERATORS           "operators"
#define F_COMPONENTS          "components"
#define F_FILES               "files"
#define F_PATH                "path"
#define F_SHA256              "sha256"
#define F_BYTES               "bytes"
#define F_LOCAL               "local"
#define F_OUTPUTS             "outputs"
#define F_NAME                "name"
#define F_SHAPE               "shape"
#define F_RESULT              "result"
#define F_TENSORS             "tensors"
#define F_MAX_ABS_DIFF        "max_abs_diff"
#define F_WORST               "worst"

/* Health, backends, jobs, reports. */
#define F_ARTIFACT_ID        "artifact"
#define F_ARENA_BYTES        "arena_bytes"
#define F_SECONDS            "seconds"
#define F_CREATED            "created"
#define F_STARTED            "started"
#define F_FINISHED           "finished"
#define F_JOB                "job"
#define F_STATUS             "status"
#define F_VERSION            "version"
#define F_ROLE               "role"
#define F_NODE               "node"
#define F_WORKERS            "workers"
#define F_THREADS            "threads"
#define F_QUEUE_DEPTH        "queue_depth"
#define F_RUNNING            "running"
#define F_BACKENDS           "backends"
#define F_AVAILABLE          "available"
#define F_OPS                "ops"
#define F_OP                 "op"
#define API_METRICS          "/metrics"

/* Jobs: the digest of the stored report.json, and for npu_sim the model's
 * totals in short (report.json holds the per-op detail). */
#define F_REPORT             "report"
#define F_NPU                "npu"
#define F_CYCLES             "cycles"
#define F_TIME_US            "time_us"
#define F_DRAM_BYTES         "dram_bytes"
#define F_UTILISATION        "utilisation"
#define F_CLOCK_MHZ          "clock_mhz"

/* Boards: GET /v1/boards, a board agent's health, and a board job's JSON. */
#define F_BOARDS             "boards"
#define F_BOARD              "board"       /* job: the board that ran it (null before) */
#define F_ATTEMPTS           "attempts"    /* job: tries on boards */
#define F_WAITING            "waiting"     /* queued board job: why it waits ("waiting for a board: ...") */
#define F_BOARD_ERROR        "board_error" /* failed board job: the board's own error {board, code, message}, as data */
#define F_FAULTS             "faults"      /* board: board faults of the jobs it ran */
#define F_FAILURE            "failure"     /* failed job: "model", "board", "timeout", "cancelled" */
#define F_URL                "url"
#define F_BUSY               "busy"
#define F_QUEUE              "queue"
#define F_PL                 "pl"
#define F_LAST_ERROR         "last_error"
#define F_LAST_SEEN          "last_seen"
#define F_JOBS_DONE          "jobs_done"
#define F_ARTIFACTS_CACHED   "artifacts_cached"
#define F_BLOBS_RECEIVED     "blobs_received"
#define F_BLOBS_BYTES        "blobs_bytes_received"
#define F_BLOBS_LOCAL        "blobs_local"
#define F_REMOTE_CACHE       "remote_cache"
#define F_UPTIME             "uptime_s"
#define F_CACHE_DIR          "cache_dir"
#define BOARD_UP             "up"
#define BOARD_DOWN           "down"
#define H_AUTHORIZATION      "Authorization"   /* "Bearer <token>" to a board agent */
/* Every TCP request of one client process carries the same random session
 * (16 hex digits), so that a balancer in front of several servers keeps a
 * process's requests on one node (examples/lab-balancer/: upload, import,
 * submit, download are several requests about one cache). */
#define H_SESSION            "X-Eulernpu-Session"
/* PUT /v1/blobs/{sha256} with no body: the blob is this file of the
 * daemon's own filesystem, an absolute path (the daemon's own user over
 * its Unix socket only: it reads the file with the daemon's rights). */
#define H_LOCAL_FILE         "X-Eulernpu-Local-File"
/* With H_LOCAL_FILE: the identity of the file whose digest the client's
 * record (client/digests.c) holds as the blob's, "DEV INO SIZE MTIME
 * CTIME" (times as SECONDS.NANOSECONDS, %09ld). While the file still has
 * it, the daemon takes the digest at its word and does not hash the copy
 * (routes_blobs.c). */
#define H_LOCAL_STAT         "X-Eulernpu-Local-Stat"
#define F_BLOBS_LOCAL_VOUCHED "blobs_local_vouched"

/* Job states. */
#define JOB_QUEUED            "queued"
#define JOB_RUNNING           "running"
#define JOB_SUCCEEDED         "succeeded"
#define JOB_FAILED            "failed"
#define JOB_CANCELLED         "cancelled"  /* DELETE /v1/jobs/{id}, or the server shut down */
#define JOB_TIMED_OUT         "timed_out"  /* queue + run past its timeout */

/* Jobs: priority, queue position, ETA, timeout; GET /v1/jobs lists them. */
#define F_OWNER              "owner"       /* who submitted a job (docs/access.md) */
#define F_PRIORITY           "priority"    /* "low" | "normal" (default) | "high" */
#define F_POSITION           "position"    /* queued: 1 = next to start; null otherwise */
#define F_ETA                "eta"         /* queued: estimated seconds until it finishes, or null */
#define F_TIMEOUT            "timeout"     /* seconds for queue + run (capped by --job-timeout) */
#define F_JOBS               "jobs"        /* GET /v1/jobs: the list, newest first */
#define PRIO_LOW             "low"
#define PRIO_NORMAL          "normal"
#define PRIO_HIGH            "high"
#define Q_STATE              "state"       /* GET /v1/jobs?state=queued,running */
#define Q_BACKEND            "backend"     /* GET /v1/jobs?backend=npu_sim */
#define Q_LIMIT              "limit"       /* GET /v1/jobs?limit=50 (default 100, at most 10000) */

/* Cache management: GET /v1/cache (stats), GET /v1/cache/entries
 * ?kind=blob|artifact|ac&limit=N&cursor=C (newest use first; C is the
 * "next" of the previous page), DELETE
 * /v1/cache/entries/{digest|artifact id|ac key}, POST /v1/cache/gc?verify=1. */
#define F_BLOBS              "blobs"
#define F_BLOB_BYTES         "blob_bytes"
#define F_ARTIFACTS          "artifacts"
#define F_AC_ENTRIES         "ac_entries"
#define F_AC_HITS            "ac_hits"
#define F_AC_MISSES          "ac_misses"
#define F_AC_HIT_RATE        "ac_hit_rate"     /* hits / (hits + misses), null before any */
#define F_CAS_HITS           "cas_hits"
#define F_CAS_MISSES         "cas_misses"
#define F_CAS_HIT_RATE       "cas_hit_rate"
#define F_EVICTIONS          "evictions"
#define F_EVICTED_BYTES      "evicted_bytes"
#define F_INTEGRITY_FAILURES "integrity_failures"
#define F_ARTIFACT_LOADS     "artifact_loads"
#define F_MAX_BYTES          "max_bytes"       /* --cache-max, 0 = unbounded */
#define F_ENTRIES            "entries"
#define F_TOTAL              "total"
#define F_KIND               "kind"
#define F_LAST_USE           "last_use"
#define F_REMOVED            "removed"         /* DELETE: the kind removed */
#define F_AC_DROPPED         "ac_dropped"
#define F_ARTIFACTS_DROPPED  "artifacts_dropped"
#define F_TMP_REMOVED        "tmp_removed"
#define F_VERIFIED           "verified"
#define F_HELD_BYTES         "held_bytes"
#define KIND_BLOB            "blob"
#define KIND_ARTIFACT        "artifact"
#define KIND_AC              "ac"
#define Q_KIND               "kind"
#define Q_VERIFY             "verify"          /* POST /v1/cache/gc?verify=1: re-hash every blob */
#define Q_CURSOR             "cursor"          /* GET /v1/cache/entries?cursor=: the page after it */
#define F_NEXT               "next"            /* its cursor, while entries remain */
#define F_EVICTING           "evicting"        /* GET /v1/cache: an eviction pass is running */
#define F_RECLAIMING         "reclaiming"      /* GET /v1/cache: evicted paths not yet off the disk */

#endif
