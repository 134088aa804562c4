#!/usr/bin/env bash
# cross.sh: the cross-ISA proof. Every example, every op case and every
# random graph is compiled for cpu_ref and run on this x86-64 CPU
# (result.npz), bundled (tests/cross/bundle.h), and run by the compute
# core's static runner for armhf and aarch64 under qemu-user-static; the
# results must be the x86-64 bits exactly. Also: the core builds with plain
# gcc and libc/libm/pthread only, and the bundle reader rejects damage.
# Needs `make cross cross-host` (make test builds both).
. "$(dirname "$0")/lib.sh"

case "$BIN" in
*/build-san/bin) BDIR=$ROOT/build-san ;;
*) BDIR=$ROOT/build ;;
esac
HOST=$BDIR/cross/bundle
NATIVE=$BDIR/cross/runner
declare -A RUNNER=([armhf]=$ROOT/build/cross/armhf/runner [aarch64]=$ROOT/build/cross/aarch64/runner)
declare -A QEMU=([armhf]=qemu-arm-static [aarch64]=qemu-aarch64-static)
declare -A MACHINE=([armhf]=ARM [aarch64]=AArch64)
QTIMEOUT=120
start=$(date +%s)

for f in "$HOST" "$NATIVE" "${RUNNER[armhf]}" "${RUNNER[aarch64]}"; do
	if [ ! -x "$f" ]; then
		notok "tool $f is built (run: make cross cross-host)"
		finish
		exit 1
	fi
done
for q in "${QEMU[@]}"; do
	command -v "$q" >/dev/null || { notok "$q is installed (apt-get install qemu-user-static)"; finish; exit 1; }
done

# ---- the core alone: plain gcc, no pkg-config, libc + libm + pthread ----
core_src=$(make -s --no-print-directory -C "$ROOT" print-core-src)
core_inc=$(make -s --no-print-directory -C "$ROOT" print-core-inc)
cross_src=$(make -s --no-print-directory -C "$ROOT" print-cross-src | sed "s|[^ ]*|$ROOT/&|g")
mkdir -p "$TMP/core"
core_ok=1
pids=()
for src in $core_src; do   # in parallel: this is most of the script's time
	o=$TMP/core/$(basename "$src" .c)
	(cd "$ROOT" && env -u CPATH -u C_INCLUDE_PATH gcc -std=c11 -D_GNU_SOURCE -O2 \
		-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
		-Werror -ffp-contract=off -pthread $core_inc -c "$src" -o "$o.o") 2>"$o.err" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || core_ok=0
done
[ "$core_ok" = 1 ] || cat "$TMP"/core/*.err | sed 's/^/    | /' | head -20
expect_eq "the core's $(wc -w <<<"$core_src") files compile with plain gcc and their rooms' headers" "$core_ok" 1
check "the core runner links with -lm -pthread only" \
	gcc -pthread $core_inc -o "$TMP/core/runner" $cross_src "$TMP"/core/*.o -lm
foreign=$(nm -u "$TMP"/core/*.o | grep -Ei ' (json_|yaml_|zip_|curl_|MHD_|EVP_|SHA|OPENSSL|inflate|deflate|crc32)' | sort -u | tr '\n' ' ')
expect_eq "the core calls no json-c, libyaml, libzip, zlib, curl, microhttpd or OpenSSL" "$foreign" ""
needed=$(readelf -d "$TMP/core/runner" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | grep -Ev '^(libc|libm|libpthread)\.so' | tr '\n' ' ')
expect_eq "the core runner needs only libc and libm" "$needed" ""
# the Makefile's way: make core and make cross never ask pkg-config and
# name no package's include path (a pkg-config that fails and logs)
mkdir -p "$TMP/shim"
printf '#!/bin/sh\necho "pkg-config $*" >>"%s/pkg-config.used"\nexit 1\n' "$TMP" >"$TMP/shim/pkg-config"
chmod +x "$TMP/shim/pkg-config"
dry=$(cd "$ROOT" && PATH="$TMP/shim:$PATH" make -n -B --no-print-directory core cross 2>&1)
expect_match "make -n core cross compiles the core natively and the runner for armhf" "$dry" \
	'arm-linux-gnueabihf-gcc .*-static .*-mcpu=cortex-a9 .*tests/cross/runner.c'
expect_eq "make core and make cross use no pkg-config package" \
	"$(cat "$TMP/pkg-config.used" 2>/dev/null)$(grep -cE 'json-c|p11-kit|libzip|microhttpd|-lyaml|-lcurl' <<<"$dry")" "0"
for isa in armhf aarch64; do
	r=${RUNNER[$isa]}
	expect_eq "$isa runner is a static ${MACHINE[$isa]} executable" \
		"$(readelf -h "$r" | sed -n 's/ *Machine: *//p' | awk '{print $NF}') $(readelf -d "$r" 2>&1 | grep -c NEEDED)" \
		"${MACHINE[$isa]} 0"
done

echo "# core checks done at $(( $(date +%s) - start )) s"

# ---- the cases ----------------------------------------------------------
cases=()
for d in "$EX"/*/; do
	[ -f "$d/spec.yaml" ] && cases+=("${d%/}")
done
for list in ops graphs; do
	while read -r name _; do
		case "$name" in '' | '#'*) continue ;; esac
		cases+=("$ROOT/tests/data/$list/$name")
	done <"$ROOT/tests/data/$list/cases.txt"
done
# the order cases (tests/ref/order.c): their results must also be the
# bits of the independent references, on every ISA
ORDER=$BDIR/tests/order_cases
mkdir -p "$TMP/order"
if "$ORDER" "$TMP/order" >"$TMP/order.list" 2>"$TMP/order.err"; then
	ok "$(wc -l <"$TMP/order.list") order cases written with their references"
else
	notok "order_cases writes the order cases"
	sed 's/^/    | /' "$TMP/order.err" | head -5
fi
declare -A ORDER_REF=()
while read -r name; do
	cases+=("$TMP/order/$name")
	ORDER_REF[$name]=$TMP/order/$name/expected.npz
done <"$TMP/order.list"
W=$TMP/work
mkdir -p "$W"
if "$HOST" prep "$W" "${cases[@]}" >"$TMP/prep.out" 2>"$TMP/prep.err"; then
	ok "${#cases[@]} cases compiled for cpu_ref, run on x86-64 and bundled"
else
	notok "prepare the cases"
	grep -v '^prepared' "$TMP/prep.err" | sed 's/^/    | /' | head -20
fi

echo "# cases prepared at $(( $(date +%s) - start )) s"

# every ISA: one runner process over every bundle (1 and 3 threads each),
# then each result against x86-64's bit for bit
for isa in native armhf aarch64; do
	args=() cmp=() n_ref=0
	for c in "${cases[@]}"; do
		b=$W/${c##*/}
		[ -f "$b/case.bundle" ] || continue
		args+=("$b/case.bundle" "$b/$isa.out")
		cmp+=("$b/$isa.out" "$b/result.npz")
		if [ -n "${ORDER_REF[${c##*/}]:-}" ]; then
			cmp+=("$b/$isa.out" "${ORDER_REF[${c##*/}]}")
			n_ref=$((n_ref + 1))
		fi
	done
	t0=$(date +%s.%N)
	if [ "$isa" = native ]; then
		timeout $QTIMEOUT "$NATIVE" "${args[@]}" >"$TMP/$isa.run" 2>"$TMP/$isa.err"
	else
		timeout $QTIMEOUT "${QEMU[$isa]}" "${RUNNER[$isa]}" "${args[@]}" >"$TMP/$isa.run" 2>"$TMP/$isa.err"
	fi
	rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" = 0 ]; then
		ok "$isa runner: $(grep -c 'threads equal' "$TMP/$isa.run") bundles, 1 and 3 threads equal ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s)"
	else
		notok "$isa runner (exit $rc)"
		sed 's/^/    | /' "$TMP/$isa.err" | head -20
	fi
	"$HOST" compare "${cmp[@]}" >"$TMP/$isa.cmp" 2>"$TMP/$isa.cmperr"
	n_eq=$(grep -c '^equal' "$TMP/$isa.cmp")
	want=$(( ${#cases[@]} + ${#ORDER_REF[@]} ))
	expect_eq "$isa: every case byte-equal with x86-64 cpu_ref, every order case with its reference ($n_eq of $want)" \
		"$n_eq $n_ref" "$want ${#ORDER_REF[@]}"
	if [ "$n_eq" != "$want" ]; then
		grep -v '^equal' "$TMP/$isa.cmp" "$TMP/$isa.cmperr" | sed 's/^/    | /' | head -20
	fi
done

echo "# cases compared at $(( $(date +%s) - start )) s"

# ---- a damaged bundle is an error, never a crash ---------------------------
mlp=$W/tiny_mlp/case.bundle
sz=$(stat -c %s "$mlp")
head -c $((sz / 2)) "$mlp" >"$TMP/trunc.bundle"
{ head -c 8 "$mlp"; printf '\x07\x00\x00\x00'; tail -c +13 "$mlp"; } >"$TMP/v7.bundle"
for isa in armhf aarch64; do
	check_status "$isa runner rejects a truncated bundle (exit 2)" 2 \
		timeout $QTIMEOUT "${QEMU[$isa]}" "${RUNNER[$isa]}" "$TMP/trunc.bundle" "$TMP/x.out"
	expect_match "$isa: the error says where it is truncated" "$(cat "$TMP/last.err")" \
		'bundle is truncated at byte [0-9]+ reading'
	check_status "$isa runner rejects bundle version 7 (exit 2)" 2 \
		timeout $QTIMEOUT "${QEMU[$isa]}" "${RUNNER[$isa]}" "$TMP/v7.bundle" "$TMP/x.out"
	expect_match "$isa: the error names the version" "$(cat "$TMP/last.err")" 'bundle version 7'
done
# every prefix rejected, every one-byte change rejected or run without harm
# (under ASan+UBSan in the sanitizer pass)
for c in tiny_mlp conv_basic softmax_axis_mid gemm_alpha_beta maxpool_3x3_s2_pad concat_axis1 g01_mlp; do
	check "the reader survives every truncation and byte change of $c" \
		timeout 300 "$NATIVE" --corrupt "$W/$c/case.bundle"
	grep -h 'truncations rejected' "$TMP/last.out" | sed 's/^/    # /'
done

echo "# runner sizes: armhf $(stat -c %s "${RUNNER[armhf]}") bytes, aarch64 $(stat -c %s "${RUNNER[aarch64]}") bytes"
echo "# cross.sh: $(( $(date +%s) - start )) s"
finish
