/* err.c: the one catalogue of error codes, and the three-line rendering.
 * `eulernpu explain`, the server's HTTP statuses, the client's exit codes and
 * README's error table all come from this table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "err.h"

#define EXIT_FAILED 1   /* compare or job failed */
#define EXIT_INPUT 2    /* usage or input error */
#define EXIT_UNREACH 3  /* only what a retry can fix: unreachable, queue full, busy,
			 * out of storage (429, 503, 507): try again later */

static const enpu_code_info table[] = {
	{ENPU_E_INTERNAL, "E0001", "internal error", 500, EXIT_INPUT,
	 "report a bug with the command and its input",
	 "Something inside eulernpu failed that should not. The message says what.\n"
	 "Please report it with the command line and the files involved."},
	{ENPU_E_NOMEM, "E0002", "out of memory", 503, EXIT_INPUT,
	 "free memory or lower the tensor sizes",
	 "An allocation failed. Large tensors, or many jobs at once, can exhaust memory."},
	{ENPU_E_IO, "E0003", "cannot read or write a file", 500, EXIT_INPUT,
	 "check the path and its permissions",
	 "A file could not be opened, read, or written. The message names it and the\n"
	 "system's reason."},
	{ENPU_E_LIMIT, "E0004", "size limit exceeded", 413, EXIT_INPUT,
	 "make the input smaller, or raise the limit named in the message",
	 "An input went past a configured limit: tensor elements or bytes, npz members\n"
	 "or decompressed size, spec bytes, YAML nesting depth or alias expansion.\n"
	 "Limits protect a shared server; each is a documented setting."},
	{ENPU_E_USAGE, "E0100", "usage error", 400, EXIT_INPUT,
	 "run with --help to see the usage",
	 "The command line is not one that this command takes."},
	{ENPU_E_YAML, "E0200", "spec is not valid YAML", 422, EXIT_INPUT,
	 "fix the YAML syntax at the position shown",
	 "The spec file could not be parsed as YAML. The position is where the parser\n"
	 "gave up; the mistake is often just before it (indentation, a missing colon,\n"
	 "an unclosed bracket or quote)."},
	{ENPU_E_SCHEMA, "E0201", "spec field missing, unknown, or of the wrong type", 422, EXIT_INPUT,
	 "see docs/spec-format.md for the fields of spec v1",
	 "The spec is YAML but not a spec v1: a required field is missing, a field is\n"
	 "not one that spec v1 knows, a key is repeated, or a value has the wrong type."},
	{ENPU_E_VERSION, "E0202", "unsupported spec format version", 422, EXIT_INPUT,
	 "write `eulernpu: 1` at the top of the spec",
	 "The `eulernpu:` field gives the spec format version. This build reads versions\n"
	 "1, 2 and 3 (3: spec v2 plus int8, uint8, int32 tensors and the quantised ops)."},
	{ENPU_E_NAME, "E0203", "invalid or duplicate name", 422, EXIT_INPUT,
	 "give every op, tensor and component its own name of [A-Za-z0-9_.-]",
	 "Names are unique across the whole spec (ops, tensors and components) and use\n"
	 "only letters, digits, '_', '.', and '-'."},
	{ENPU_E_REF, "E0204", "reference to an unknown tensor", 422, EXIT_INPUT,
	 "read a graph input, a weight, or the output of an earlier op",
	 "An op reads a tensor that is neither a graph input, nor a weight, nor the\n"
	 "output of any op."},
	{ENPU_E_CYCLE, "E0205", "op reads a tensor produced later", 422, EXIT_INPUT,
	 "reorder the ops so that each reads only what earlier ops produced",
	 "Ops run in the order written (components in order, ops in order within each).\n"
	 "An op that reads the output of a later op would form a cycle or need\n"
	 "reordering; spec v1 requires the written order to be a valid schedule."},
	{ENPU_E_SHAPE, "E0206", "shape mismatch", 422, EXIT_INPUT,
	 "correct the shapes so the op's rule holds",
	 "Shapes are inferred op by op from the inputs and weights. This op's inputs do\n"
	 "not fit its shape rule, or a declared shape disagrees with the inferred one."},
	{ENPU_E_DTYPE, "E0207", "unsupported dtype", 422, EXIT_INPUT,
	 "use float32",
	 "Spec v1 supports float32 only. Spec v2 adds int64 weights, read only as gather's\n"
	 "indices. Spec v3 adds int8, uint8 and int32 tensors, which only the quantised\n"
	 "ops read and write (each op's type rule, docs/spec-format.md); the inputs of\n"
	 "one type (a tensor and its zero point) must have the same dtype."},
	{ENPU_E_OP, "E0208", "unknown operator", 422, EXIT_INPUT,
	 "use an op of spec v1 (see `eulernpu backends`)",
	 "The op is not one of spec v1's operators."},
	{ENPU_E_ATTR, "E0209", "invalid operator attribute", 422, EXIT_INPUT,
	 "see the op table in docs/spec-format.md for the op's attributes",
	 "An attribute is unknown for this op, missing though required, or has a value\n"
	 "of the wrong type or range; or a later spec version added it (ceil_mode and\n"
	 "maxpool2d's dilations need `eulernpu: 2`)."},
	{ENPU_E_LOWERING, "E0210", "backend lowering missing for op", 422, EXIT_INPUT,
	 "choose a backend that lowers this op (see `eulernpu backends`)",
	 "The chosen backend has no lowering for this op. `eulernpu backends` prints the\n"
	 "capability matrix: which backend lowers which op."},
	{ENPU_E_BACKEND, "E0211", "unknown or unavailable backend", 422, EXIT_INPUT,
	 "use one of: cpu_ref, npu_sim, zynq_ps, fpga_board",
	 "The backend named is not known, or not available in this build or on this\n"
	 "server."},
	{ENPU_E_OUTPUT, "E0212", "output is never produced", 422, EXIT_INPUT,
	 "name an op output or a graph input in `outputs`",
	 "Every name listed in `outputs` must be produced by an op (or be a graph input)."},
	{ENPU_E_TARGET, "E0213", "invalid target description", 422, EXIT_INPUT,
	 "see the targets section of docs/spec-format.md",
	 "A field of `targets.<backend>` (or of a target file) is unknown or invalid."},
	{ENPU_E_WEIGHT_MISSING, "E0300", "weights tensor missing", 422, EXIT_INPUT,
	 "add the tensor to weights.npz under the name the spec declares",
	 "The spec declares a weight that weights.npz does not hold."},
	{ENPU_E_WEIGHT_SHAPE, "E0301", "weights tensor shape mismatch", 422, EXIT_INPUT,
	 "retrain the weights or correct the spec",
	 "A tensor in weights.npz has a different shape from the one the spec declares.\n"
	 "A transposed weight is the usual cause: matmul reads (in, out) as written."},
	{ENPU_E_WEIGHT_DTYPE, "E0302", "weights tensor dtype mismatch", 422, EXIT_INPUT,
	 "save the weights with the spec's dtype (np.float32; np.int64 for int64)",
	 "A tensor in weights.npz has a different dtype from the one the spec declares."},
	{ENPU_E_WEIGHT_EXTRA, "E0303", "weights file holds an undeclared tensor", 422, EXIT_INPUT,
	 "declare the tensor under `weights:` or remove it from weights.npz",
	 "weights.npz holds a tensor the spec does not declare; usually a typo in a name."},
	{ENPU_E_WEIGHT_VALUE, "E0304", "weights tensor value out of range", 422, EXIT_INPUT,
	 "correct the weight's values (gather's indices lie in [-d, d - 1])",
	 "A weight's values do not fit the op that reads them: an index of gather's int64\n"
	 "indices is outside [-d, d - 1] for the gathered dimension d. Indices are\n"
	 "constant, so this is checked once when the model is compiled, never when it runs."},
	{ENPU_E_NPY, "E0400", "not a valid .npy/.npz file", 422, EXIT_INPUT,
	 "write the file with numpy.savez (or np.save for .npy)",
	 "The file is not a NumPy .npz (a zip of .npy members) or .npy, or it is\n"
	 "truncated or corrupt, or a member's declared size disagrees with its data, or\n"
	 "a member name is unsafe (path separators, '..', duplicates)."},
	{ENPU_E_NPY_DTYPE, "E0401", "unsupported array dtype", 422, EXIT_INPUT,
	 "convert with arr.astype('<f4') before saving",
	 "Only little-endian float32 arrays ('<f4') are read in this version."},
	{ENPU_E_NPY_ORDER, "E0402", "unsupported array layout", 422, EXIT_INPUT,
	 "save np.ascontiguousarray(arr) instead",
	 "Fortran-ordered arrays are not read; save the array in C order."},
	{ENPU_E_INPUT_MISSING, "E0500", "input tensor missing", 422, EXIT_INPUT,
	 "save every graph input in input.npz under its spec name",
	 "input.npz lacks a tensor that the spec lists under `inputs`."},
	{ENPU_E_INPUT_SHAPE, "E0501", "input tensor shape mismatch", 422, EXIT_INPUT,
	 "save the input with the shape the spec declares",
	 "A tensor in input.npz has a different shape from the spec's declaration."},
	{ENPU_E_INPUT_EXTRA, "E0502", "input file holds an unknown tensor", 422, EXIT_INPUT,
	 "remove it, or declare it under `inputs:`",
	 "input.npz holds a tensor that is not a graph input; usually a typo in a name."},
	{ENPU_E_CMP_DIFF, "E0600", "tensors differ", 200, EXIT_FAILED,
	 "check the backend, or loosen --tol/--rtol if the difference is expected",
	 "compare found an element whose difference exceeds the tolerance: |got - expected|\n"
	 "> tol + rtol * |expected|. With --exact, the float bits differ. The message names\n"
	 "the tensor, the worst index, both values, and the difference."},
	{ENPU_E_CMP_KEY, "E0601", "tensor keys differ", 422, EXIT_INPUT,
	 "compare results of the same model: the key sets must be equal",
	 "A tensor name is in one file and not in the other. The message lists both key sets."},
	{ENPU_E_CMP_SHAPE, "E0602", "tensor shape mismatch", 422, EXIT_INPUT,
	 "compare results of the same model and inputs",
	 "The same tensor has different shapes in the two files."},
	{ENPU_E_CMP_DTYPE, "E0603", "tensor dtype mismatch", 422, EXIT_INPUT,
	 "compare results of the same model and inputs",
	 "The same tensor has different dtypes in the two files."},
	{ENPU_E_ARTIFACT, "E0700", "invalid artifact", 422, EXIT_INPUT,
	 "compile the spec again with `eulernpu compile`",
	 "An artifact file (manifest.json, graph.json, plan.json, weights) is missing,\n"
	 "malformed, inconsistent, or names a path outside the artifact."},
	{ENPU_E_ARTIFACT_DIGEST, "E0701", "artifact file digest mismatch", 422, EXIT_INPUT,
	 "compile the spec again; do not edit artifact files by hand",
	 "A file of the artifact does not have the SHA-256 that manifest.json records:\n"
	 "it was modified or truncated after compile."},
	{ENPU_E_NOT_FOUND, "E0800", "not found", 404, EXIT_INPUT,
	 "check the id or path",
	 "No such route, blob, artifact, or job on this server."},
	{ENPU_E_METHOD, "E0801", "method not allowed", 405, EXIT_INPUT,
	 "see the REST API table in README.md",
	 "The route exists but not with this HTTP method."},
	{ENPU_E_TOO_LARGE, "E0802", "request body too large", 413, EXIT_INPUT,
	 "send a smaller file, or raise the server's --max-upload",
	 "The body is larger than the server accepts."},
	{ENPU_E_BAD_REQUEST, "E0803", "malformed request", 400, EXIT_INPUT,
	 "see the REST API table in README.md",
	 "The request's body, query, or path is not what the route takes. The message\n"
	 "names the field."},
	{ENPU_E_BLOB_MISSING, "E0804", "blob not on the server", 409, EXIT_INPUT,
	 "upload the blob first (PUT /v1/blobs/{sha256}), then retry",
	 "A request names a blob by digest that the server does not hold."},
	{ENPU_E_BLOB_DIGEST, "E0805", "uploaded bytes do not match the digest", 422, EXIT_INPUT,
	 "upload the file under its own SHA-256",
	 "The SHA-256 of the uploaded bytes differs from the digest in the path, or the\n"
	 "digest is not 64 lowercase hex characters. Nothing was stored."},
	{ENPU_E_QUEUE_FULL, "E0806", "job queue full", 429, EXIT_UNREACH,
	 "retry after the time in Retry-After (the client retries --retry times)",
	 "The server's job queue is at its limit (--max-queue). The client retries\n"
	 "after the Retry-After the server sends, --retry times within\n"
	 "--retry-max-time seconds, then exits 3: try again later."},
	{ENPU_E_JOB_FAILED, "E0807", "job failed", 200, EXIT_FAILED,
	 "see the message for the cause",
	 "A run job ended without a result: cancelled, or failed for the reason given."},
	{ENPU_E_UNREACHABLE, "E0808", "server unreachable", 503, EXIT_UNREACH,
	 "start eulernpud, or unset EULERNPU_SERVER to use a private daemon",
	 "The client could not connect to the server, the connection broke, or a\n"
	 "gateway in front of it answered 502, 503 or 504. Worth retrying later\n"
	 "(exit status 3)."},
	{ENPU_E_SERVER, "E0809", "unexpected server response", 502, EXIT_INPUT,
	 "check that the URL points at eulernpud of a compatible version",
	 "The server answered with something the client does not understand: another\n"
	 "program on that URL, or an eulernpud of an incompatible version. Retrying\n"
	 "does not help (exit status 2); a broken connection or a gateway's 502, 503\n"
	 "or 504 is E0808 (exit 3)."},
	{ENPU_E_STORAGE, "E0810", "server storage full or failing", 507, EXIT_UNREACH,
	 "free disk space on the server's cache directory",
	 "The server could not write to its cache (disk full or I/O error)."},
	{ENPU_E_NO_BOARD, "E0811", "no board serves this backend", 503, EXIT_UNREACH,
	 "start a board agent (eulernpud --role board) and pass it to the server with --board NAME=URL",
	 "zynq_ps and fpga_board jobs run on board agents. This server fronts no board\n"
	 "that serves the job's backend, or none of them is up (the message lists each\n"
	 "board's state and last error), so the job was refused rather than queued; or\n"
	 "a queued job's boards stayed down longer than the server's --board-wait."},
	{ENPU_E_BOARD_FAULT, "E0812", "board fault", 502, EXIT_FAILED,
	 "check the board agent named in the message (eulernpu boards), then run again",
	 "The board running the job stopped answering, refused the connection, failed\n"
	 "with a server error or an error of its own (kept in the job's board_error), or\n"
	 "returned what the lab refused (a result that is not the artifact's outputs),\n"
	 "and no other board could take the job within the retry limit. The job itself\n"
	 "may be fine: run it again once a board is up."},
	{ENPU_E_JOB_TIMEOUT, "E0813", "job timed out", 504, EXIT_FAILED,
	 "raise the server's --job-timeout, or check the board (eulernpu boards)",
	 "The job did not finish within the server's job timeout (queue and run time\n"
	 "together). A job running on a board was cancelled there."},
	{ENPU_E_AUTH, "E0814", "missing or wrong bearer token", 401, EXIT_INPUT,
	 "send `Authorization: Bearer TOKEN` with the token the server was given",
	 "This server requires a bearer token on every request but GET /v1/health, and\n"
	 "the request carried none, or a wrong one."},
	{ENPU_E_FORBIDDEN, "E0815", "forbidden: token's role lacks access", 403, EXIT_INPUT,
	 "use a token of role admin, or ask the server's operator for one",
	 "The token is valid but its role (user) may not call this route: cache and\n"
	 "board management need a token of role admin in the server's --tokens file."},
	{ENPU_E_CONFIG, "E0816", "invalid configuration", 500, EXIT_INPUT,
	 "fix the file, then check it with `eulernpud --check-config --config FILE`",
	 "The daemon's configuration file (YAML; keys are the long option names\n"
	 "without --) has an unknown key, a value of the wrong type or out of range,\n"
	 "or is not valid YAML. Command-line options override the file.\n"
	 "The daemon's state must be private too: a cache or socket directory that\n"
	 "another user owns or that others may write to (the group only with\n"
	 "--socket-group), or a cache directory another daemon holds (its pid is\n"
	 "named), stops it at start-up with this code."},
	{ENPU_E_CONFLICT, "E0817", "conflicts with a job's state", 409, EXIT_INPUT,
	 "see the message: wait for the job, or cancel it first",
	 "The request cannot be done in the job's current state: cancelling a job that\n"
	 "has already finished, or removing a cache entry that a queued or running job\n"
	 "still needs."},
	{ENPU_E_URI_TOO_LONG, "E0818", "request URI too long", 414, EXIT_INPUT,
	 "send a shorter path and query (files travel in the body)",
	 "The request's path and query are longer than the server reads (8 KiB).\n"
	 "No route takes a URI that long: files and lists go in the body."},
	{ENPU_E_HEADERS_TOO_LARGE, "E0819", "request headers too large", 431, EXIT_INPUT,
	 "send fewer or smaller headers",
	 "The request's header fields add up to more than the server reads (64 KiB).\n"
	 "A client, proxy or cookie jar added far more than eulernpu needs."},
	{ENPU_E_TLS, "E0820", "no trusted TLS connection", 502, EXIT_INPUT,
	 "pass --cacert FILE (or set EULERNPU_CACERT) naming the CA that signed the "
	 "server's certificate, and use the host name the certificate names",
	 "The client could not make a trusted TLS connection to an https:// server:\n"
	 "its certificate is signed by a CA the client was not given (--cacert), names\n"
	 "another host, has expired, or the CA file cannot be read. Retrying does not\n"
	 "help: fix the client's configuration (exit status 2)."},
	{ENPU_E_MODEL_CONFLICT, "E0821", "model version names another artifact", 409, EXIT_INPUT,
	 "deploy under a new version (leave out --version for the next one), or retire "
	 "that version first",
	 "A model's version names one artifact for as long as it is deployed, so that\n"
	 "NAME:VERSION always runs the same bytes. Deploying the same artifact again is\n"
	 "a no-op; another artifact needs another version."},
	{ENPU_E_OTHER_NODE, "E0822", "job belongs to another node", 404, EXIT_INPUT,
	 "ask the node that the job id names, or the balancer in front of both",
	 "A job id that begins with a node id (`n2-...`) was made by the lab server\n"
	 "started with that --node-id. This server is another node and does not have the\n"
	 "job: send the request through the balancer, which routes /v1/jobs/<node>-...\n"
	 "to its node (examples/lab-balancer/), or to that node itself."},
	{ENPU_E_ONNX, "E0403", "not a valid ONNX model or tensor", 422, EXIT_INPUT,
	 "re-export the model (torch.onnx.export, onnx.save) and check the file is complete",
	 "An ONNX file (a ModelProto, or a TensorProto .pb) could not be read: the\n"
	 "protobuf is malformed or truncated, a tensor's data does not match its dims,\n"
	 "an attribute has a type the reader does not take (graph, sparse tensor, type\n"
	 "proto), or a tensor's external-data entry names no file. The message names\n"
	 "the node, attribute or tensor."},
	{ENPU_E_IMPORT, "E0404", "cannot import the ONNX model", 422, EXIT_INPUT,
	 "bind the dims the message names with --input NAME=SHAPE, or re-export the model "
	 "with the ops spec v2 has (docs/import.md)",
	 "The ONNX model was read, but the importer cannot turn it into a spec: an\n"
	 "opset outside 7-17, nodes of another domain or op the importer does not\n"
	 "map, attribute values spec v2 cannot express, int64 data computed at run\n"
	 "time rather than folded to a constant, a --input binding that names no\n"
	 "graph input or has another rank, or an external-data file it cannot read.\n"
	 "The message lists every such node at once (name, op type, opset, why)."},
};

const enpu_code_info *enpu_code_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

const enpu_code_info *enpu_code_info_of(enpu_code code)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return &table[i];
	return &table[0];
}

const enpu_code_info *enpu_code_by_id(const char *id)
{
	if (!id)
		return NULL;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].id, id) == 0)
			return &table[i];
	return NULL;
}

int enpu_fail(enpu_err *e, enpu_code code, const char *where, const char *fix,
	      const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	e->code = code;
	e->sys_errno = 0;
	snprintf(e->where, sizeof(e->where), "%s", where ? where : "");
	snprintf(e->fix, sizeof(e->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

void enpu_err_render(const enpu_err *e, char *buf, size_t cap)
{
	const enpu_code_info *ci = enpu_code_info_of(e->code);
	const char *fix = e->fix[0] ? e->fix : ci->fix;

	if (e->where[0])
		snprintf(buf, cap, "error[%s]: %s\n  %s: %s\n  fix: %s \xc2\xb7 See: eulernpu explain %s\n",
			 ci->id, ci->title, e->where, e->message, fix, ci->id);
	else
		snprintf(buf, cap, "error[%s]: %s\n  %s\n  fix: %s \xc2\xb7 See: eulernpu explain %s\n",
			 ci->id, ci->title, e->message, fix, ci->id);
}
