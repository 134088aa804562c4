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

/* Query parameters. */
#define Q_WAIT                "wait"      /* seconds to long-poll for a job to finish */

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
#define BOARD_UP             "up"
#define BOARD_DOWN           "down"
#define H_AUTHORIZATION      "Authorization"   /* "Bearer <token>" to a board agent */

/* Job states. */
#define JOB_QUEUED            "queued"
#define JOB_RUNNING           "running"
#define JOB_SUCCEEDED         "succeeded"
#define JOB_FAILED            "failed"

#endif
