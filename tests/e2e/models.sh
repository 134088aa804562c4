#!/usr/bin/env bash
# models.sh: named, versioned models as a user meets them: `eulernpu deploy`
# (a directory uploaded, the next version, the same again, another artifact
# under a taken version refused), `eulernpu run --model` giving the bytes
# `run --artifact` gives, `eulernpu models` and `models rm`, the REST
# routes' answers to bad names, versions and bodies, models kept across a
# restart, a file in models/ that the daemon did not write left out, and a
# deployed artifact kept by eviction until its model is retired.
. "$(dirname "$0")/lib.sh"

U=http://localhost
MLP=$EX/tiny_mlp
CNN=$EX/tiny_cnn
enpu() { EULERNPU_SERVER=unix:$TMP/m.sock timeout 120 "$BIN/eulernpu" "$@"; }
code_of() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$1" 2>/dev/null; }

start_daemon m || { finish; exit 1; }
enpu compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --out "$TMP/mlp" >/dev/null
enpu compile --spec "$CNN/spec.yaml" --weights "$CNN/weights.npz" --out "$TMP/cnn" >/dev/null
MA=$(jget "$TMP/mlp/manifest.json" id)
CA=$(jget "$TMP/cnn/manifest.json" id)

check "deploy: a directory as a new model's first version" enpu deploy "$TMP/mlp" --name mlp
expect_match "deploy: says which version" "$(cat "$TMP/last.out")" '^deployed mlp:1 '
check "deploy: the next version without --version" enpu deploy "$MA" --name mlp
expect_match "deploy: version 2" "$(cat "$TMP/last.out")" '^deployed mlp:2 '
check "deploy: the same artifact as a taken version changes nothing" enpu deploy "$MA" --name mlp --version 2
expect_match "deploy: says so" "$(cat "$TMP/last.out")" '^already deployed mlp:2 '
check_status "deploy: another artifact under a taken version is refused (exit 2)" 2 \
	enpu deploy "$TMP/cnn" --name mlp --version 2
expect_match "deploy: E0821" "$(cat "$TMP/last.err")" 'E0821'
check_status "deploy: a bad name is a usage error" 2 enpu deploy "$MA" --name ../x
check "deploy: another model" enpu deploy "$TMP/cnn" --name cnn --version 10

check "run --model: the newest version" enpu run --model mlp --input "$MLP/input.npz" --out "$TMP/m.npz"
check "run --artifact: the same artifact" enpu run --artifact "$MA" --input "$MLP/input.npz" --out "$TMP/a.npz"
check "run --model gives the bytes run --artifact gives" cmp "$TMP/m.npz" "$TMP/a.npz"
check "run --model NAME:V" enpu run --model cnn:10 --input "$CNN/input.npz" --out "$TMP/c.npz" --json
expect_eq "the job names the model's version" "$(jget "$TMP/last.out" model)" cnn:10
check_status "run --model: an unknown version (exit 2)" 2 enpu run --model mlp:9 --input "$MLP/input.npz" --out "$TMP/x.npz"
expect_match "run --model: E0800 names it" "$(cat "$TMP/last.err")" "model 'mlp' has no version 9"

check "models: the table" enpu models
expect_match "models: a row per version, the latest starred" "$(cat "$TMP/last.out")" '^mlp +2 \* +[0-9a-f]{12} +cpu_ref +yes'
expect_eq "models: three rows and the heads" "$(wc -l <"$TMP/last.out")" 4

# the REST routes, as curl sends them
st() { dcurl m -o "$TMP/r.json" -w '%{http_code}' "$@"; }
expect_eq "PUT a version: 201" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$CA\"}" "$U/v1/models/cnn/versions/11")" 201
expect_eq "PUT it again: 200" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$CA\"}" "$U/v1/models/cnn/versions/11")" 200
expect_eq "PUT another artifact there: 409" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$MA\"}" "$U/v1/models/cnn/versions/11")" 409
expect_eq "409 is E0821" "$(code_of "$TMP/r.json")" E0821
expect_eq "version 0: 400" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$CA\"}" "$U/v1/models/cnn/versions/0")" 400
expect_eq "version 01: 400" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$CA\"}" "$U/v1/models/cnn/versions/01")" 400
expect_eq "a name of 65 bytes: 400" "$(st -X PUT -H 'Content-Type: application/json' -d "{\"artifact\":\"$CA\"}" "$U/v1/models/$(printf 'a%.0s' $(seq 65))/versions/1")" 400
expect_eq "a name beginning with '.': 400" "$(st "$U/v1/models/.hidden")" 400
expect_eq "no artifact field: 400" "$(st -X POST -H 'Content-Type: application/json' -d '{}' "$U/v1/models/cnn/versions")" 400
expect_eq "not JSON: 400" "$(st -X POST -H 'Content-Type: application/json' -d '{"artifact":' "$U/v1/models/cnn/versions")" 400
expect_eq "an artifact the cache lacks: 404" "$(st -X POST -H 'Content-Type: application/json' -d "{\"artifact\":\"$(printf '4%.0s' $(seq 64))\"}" "$U/v1/models/cnn/versions")" 404
expect_eq "a job with both artifact and model: 400" "$(st -H 'Content-Type: application/json' -d "{\"artifact\":\"$MA\",\"model\":\"mlp\",\"input\":\"$MA\"}" "$U/v1/jobs")" 400
expect_eq "a job naming an unknown model: 404" "$(st -H 'Content-Type: application/json' -d "{\"model\":\"nope\",\"input\":\"$MA\"}" "$U/v1/jobs")" 404
expect_eq "GET /v1/models/cnn: 200" "$(st "$U/v1/models/cnn")" 200
expect_eq "its latest is 11" "$(jget "$TMP/r.json" latest)" 11
expect_eq "DELETE a version: 200" "$(st -X DELETE "$U/v1/models/cnn/versions/11")" 200
expect_eq "DELETE it again: 404" "$(st -X DELETE "$U/v1/models/cnn/versions/11")" 404
check "the daemon still answers" dcurl m -f -o /dev/null "$U/v1/health"

# a restart keeps them; a file the daemon did not write is left out
stop_daemon m
printf '{"name": "junk", "versions": [{"version": "1", "artifact": "../../x"}]}' >"$TMP/m.cache/models/junk.json"
printf 'not json' >"$TMP/m.cache/models/bad.json"
start_daemon m || { finish; exit 1; }
check "after a restart: run --model" enpu run --model mlp:1 --input "$MLP/input.npz" --out "$TMP/m2.npz"
check "after a restart: the same bytes" cmp "$TMP/m2.npz" "$TMP/a.npz"
check "after a restart: models" enpu models --json
expect_eq "after a restart: the daemon's models, not the bad files" \
	"$("$PY" -c 'import json, sys; print(" ".join(m["name"] for m in json.load(open(sys.argv[1]))["models"]))' "$TMP/last.out")" "cnn mlp"
expect_match "the bad files are logged" "$(cat "$TMP/m.log")" 'models/junk.json: .*left out'

# eviction: a deployed artifact stays; retired, it goes
stop_daemon m
start_daemon m --cache-max 1 || { finish; exit 1; }
check "gc at a bound of one byte" dcurl m -f -X POST -o /dev/null "$U/v1/cache/gc"
check "a deployed artifact stays" dcurl m -f -o /dev/null "$U/v1/artifacts/$MA"
check "models rm mlp" enpu models rm mlp
check "gc again" dcurl m -f -X POST -o /dev/null "$U/v1/cache/gc"
expect_eq "retired, its artifact is evicted" "$(st "$U/v1/artifacts/$MA")" 404
check "cnn's stays" dcurl m -f -o /dev/null "$U/v1/artifacts/$CA"
stop_daemon m
finish
