/* err.h: the project's structured error and its one catalogue of codes.
 *
 * Every function that can fail returns -1 (or NULL) and fills an enpu_err;
 * nothing in common/ prints or exits. The caller renders the error as the
 * three lines the user sees (enpu_err_render) or as JSON (server). */
#ifndef ENPU_ERR_H
#define ENPU_ERR_H

#include <stddef.h>

/* One entry per code; order is free, codes are stable forever. */
typedef enum enpu_code {
	ENPU_OK = 0,
	ENPU_E_INTERNAL,          /* E0001 internal error (a bug) */
	ENPU_E_NOMEM,             /* E0002 out of memory */
	ENPU_E_IO,                /* E0003 cannot read or write a file */
	ENPU_E_LIMIT,             /* E0004 a configured size limit was exceeded */
	ENPU_E_USAGE,             /* E0100 command-line usage error */
	ENPU_E_YAML,              /* E0200 spec is not valid YAML */
	ENPU_E_SCHEMA,            /* E0201 spec field missing, unknown or of the wrong type */
	ENPU_E_VERSION,           /* E0202 unsupported spec format version */
	ENPU_E_NAME,              /* E0203 invalid or duplicate name */
	ENPU_E_REF,               /* E0204 reference to an unknown tensor */
	ENPU_E_CYCLE,             /* E0205 op graph has a cycle / reads a later tensor */
	ENPU_E_SHAPE,             /* E0206 shape inference failed or disagrees with a declaration */
	ENPU_E_DTYPE,             /* E0207 unsupported dtype */
	ENPU_E_OP,                /* E0208 unknown operator */
	ENPU_E_ATTR,              /* E0209 invalid operator attribute */
	ENPU_E_LOWERING,          /* E0210 backend lowering missing for op X */
	ENPU_E_BACKEND,           /* E0211 unknown backend */
	ENPU_E_OUTPUT,            /* E0212 declared output is never produced */
	ENPU_E_TARGET,            /* E0213 invalid target description */
	ENPU_E_WEIGHT_MISSING,    /* E0300 weights tensor missing */
	ENPU_E_WEIGHT_SHAPE,      /* E0301 weights tensor shape mismatch */
	ENPU_E_WEIGHT_DTYPE,      /* E0302 weights tensor dtype mismatch */
	ENPU_E_WEIGHT_EXTRA,      /* E0303 weights file holds a tensor the spec does not declare */
	ENPU_E_WEIGHT_VALUE,      /* E0304 a weight's value is out of range (gather's indices) */
	ENPU_E_NPY,               /* E0400 not a valid .npy / .npz file (corrupt, truncated) */
	ENPU_E_NPY_DTYPE,         /* E0401 unsupported array dtype */
	ENPU_E_NPY_ORDER,         /* E0402 unsupported array layout */
	ENPU_E_INPUT_MISSING,     /* E0500 input tensor missing */
	ENPU_E_INPUT_SHAPE,       /* E0501 input tensor shape mismatch */
	ENPU_E_INPUT_EXTRA,       /* E0502 input file holds an unknown tensor */
	ENPU_E_CMP_DIFF,          /* E0600 tensors differ beyond tolerance */
	ENPU_E_CMP_KEY,           /* E0601 tensor keys differ */
	ENPU_E_CMP_SHAPE,         /* E0602 tensor shape mismatch in compare */
	ENPU_E_CMP_DTYPE,         /* E0603 tensor dtype mismatch in compare */
	ENPU_E_ARTIFACT,          /* E0700 invalid artifact */
	ENPU_E_ARTIFACT_DIGEST,   /* E0701 artifact file digest mismatch */
	ENPU_E_NOT_FOUND,         /* E0800 no such resource */
	ENPU_E_METHOD,            /* E0801 method not allowed */
	ENPU_E_TOO_LARGE,         /* E0802 request body too large */
	ENPU_E_BAD_REQUEST,       /* E0803 malformed request */
	ENPU_E_BLOB_MISSING,      /* E0804 blob not on the server */
	ENPU_E_BLOB_DIGEST,       /* E0805 uploaded bytes do not match the digest */
	ENPU_E_QUEUE_FULL,        /* E0806 job queue full */
	ENPU_E_JOB_FAILED,        /* E0807 job failed */
	ENPU_E_UNREACHABLE,       /* E0808 server unreachable */
	ENPU_E_SERVER,            /* E0809 server answered with an unexpected response */
	ENPU_E_STORAGE,           /* E0810 server storage full or failing */
	ENPU_E_NO_BOARD,          /* E0811 no board serves this backend */
	ENPU_E_BOARD_FAULT,       /* E0812 board fault */
	ENPU_E_JOB_TIMEOUT,       /* E0813 job timed out */
	ENPU_E_AUTH,              /* E0814 missing or wrong bearer token */
	ENPU_E_FORBIDDEN,         /* E0815 token's role lacks access */
	ENPU_E_CONFIG,            /* E0816 invalid configuration */
	ENPU_E_CONFLICT,          /* E0817 conflicts with a job's state */
	ENPU_E_URI_TOO_LONG,      /* E0818 request URI too long (414) */
	ENPU_E_HEADERS_TOO_LARGE, /* E0819 request headers too large (431) */
	ENPU_E_TLS,               /* E0820 no trusted TLS connection (client side) */
	ENPU_E_MODEL_CONFLICT,    /* E0821 model version names another artifact */
	ENPU_E_OTHER_NODE,        /* E0822 the job belongs to another node (404) */
	ENPU_E_ONNX,              /* E0403 not a valid ONNX model or tensor */
	ENPU_E_IMPORT,            /* E0404 cannot import the ONNX model */
	ENPU_E_CODE_COUNT
} enpu_code;

typedef struct enpu_err {
	enpu_code code;
	char message[768];  /* the detail line, subject quoted, what failed first */
	char where[512];    /* "spec.yaml:9:7", "weights.npz member 'fc1.w'", or "" */
	char fix[384];      /* what to do; "" = the catalogue's default fix */
	int sys_errno;      /* ENPU_E_IO: the errno of the failed call (0 if none), so
			     * a caller can tell a full disk from a bad path */
} enpu_err;

#define ENPU_ERR_INIT {ENPU_OK, "", "", "", 0}

typedef struct enpu_code_info {
	enpu_code code;
	const char *id;       /* "E0301" */
	const char *title;    /* "weights tensor shape mismatch" */
	int http_status;      /* status the server answers with */
	int exit_code;        /* client exit: 1 compare/job failed, 2 input/usage, 3 unreachable */
	const char *fix;      /* default fix line */
	const char *explain;  /* long form for `eulernpu explain` (several lines) */
} enpu_code_info;

/* Catalogue lookups. enpu_code_info_of never returns NULL (falls back to
 * the internal-error entry); enpu_code_by_id returns NULL for unknown ids. */
const enpu_code_info *enpu_code_info_of(enpu_code code);
const enpu_code_info *enpu_code_by_id(const char *id);
const enpu_code_info *enpu_code_table(size_t *n);

/* Fill *e (if non-NULL) and return -1. where/fix may be NULL. The message
 * is printf-formatted. Overwrites any previous error. */
int enpu_fail(enpu_err *e, enpu_code code, const char *where, const char *fix,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The three lines, '\n'-terminated, into buf (truncated to cap):
 *   error[E0301]: weights tensor shape mismatch
 *     <where>: <message>
 *     fix: <fix> · See: eulernpu explain E0301          */
void enpu_err_render(const enpu_err *e, char *buf, size_t cap);

#endif
