#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fuzzing for CI and by hand: builds the libFuzzer targets (clang,
# -Dfuzz=true: coverage + ASan + UBSan), replays every seed and every past
# finding as a regression test, then fuzzes each target for a bounded time
# and prints executions per second and total executions. Fails on any
# crash, sanitizer report, invariant failure, leak or hang.
#
#   test/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#     SECONDS_PER_TARGET  default 60 (0: replay only)
#     TARGET              ctl rule_parse flow_extract virtq_dequeue
#                         virtq_enqueue net_hdr virtq_packed (default: all)
#   VSW_FUZZ_BUILD        build directory (default build-fuzz)
#
# Targets run one after another (niced): the box is shared. Inputs that
# found new coverage go to $BUILD/fuzz-corpus/<target>/, findings to
# $BUILD/fuzz-crashes/<target>/; copy a finding into
# test/fuzz/regress/<target>/ once it is fixed.
set -euo pipefail
cd "$(dirname "$0")/../.."

ALL=(ctl rule_parse flow_extract virtq_dequeue virtq_enqueue net_hdr virtq_packed)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${ALL[@]}")
BUILD=${VSW_FUZZ_BUILD:-build-fuzz}

log() { printf '\033[1m== %s\033[0m\n' "$*"; }

for p in clang libclang-rt-14-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' ||
		{ echo "missing Debian package $p (libFuzzer runtime)" >&2; exit 1; }
done

if [ -f "$BUILD/build.ninja" ]; then
	meson configure "$BUILD" -Dfuzz=true >/dev/null
else
	CC=clang meson setup "$BUILD" -Dfuzz=true -Dintegration_tests=false
fi
log "building fuzz targets ($BUILD/)"
ninja -C "$BUILD" $(printf 'test/fuzz/fuzz_%s ' "${targets[@]}")

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

fail=0
log "replaying corpus + regressions"
for t in "${targets[@]}"; do
	n=$(find "test/fuzz/corpus/$t" "test/fuzz/regress/$t" -type f | wc -l)
	if "./$BUILD/test/fuzz/fuzz_$t" -runs=0 "test/fuzz/corpus/$t" \
		"test/fuzz/regress/$t" >"$BUILD/fuzz-replay-$t.log" 2>&1; then
		printf '%-16s %5d inputs  ok\n' "$t" "$n"
	else
		printf '%-16s %5d inputs  FAILED (see %s)\n' "$t" "$n" \
			"$BUILD/fuzz-replay-$t.log"
		fail=1
	fi
done
[ "$secs" -eq 0 ] && exit $fail

log "fuzzing each target for ${secs}s"
printf '%-16s %10s %14s %8s  %s\n' target exec/s executions corpus result
for t in "${targets[@]}"; do
	work="$BUILD/fuzz-corpus/$t"
	crashes="$BUILD/fuzz-crashes/$t"
	out="$BUILD/fuzz-$t.log"
	mkdir -p "$work" "$crashes"
	rc=0
	# new inputs go to the first directory: the seeds stay as they are
	nice -n 10 "./$BUILD/test/fuzz/fuzz_$t" -max_total_time="$secs" \
		-print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
		-artifact_prefix="$crashes/" "$work" "test/fuzz/corpus/$t" \
		>"$out" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out")
	ncorp=$(find "$work" -type f | wc -l)
	if [ $rc -eq 0 ]; then
		res=ok
	else
		res="FAILED: $(ls -t "$crashes" 2>/dev/null | head -1) (log $out)"
		fail=1
	fi
	printf '%-16s %10s %14s %8s  %s\n' "$t" "${rate:-?}" "${execs:-?}" \
		"$ncorp" "$res"
done
exit $fail
