#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ (address sanitizer + libFuzzer) and runs each for
# SECONDS seconds, seeded from Fuzz/corpus/<target>/. New corpus entries go to
# .build/fuzz-corpus/<target>/ and crashing inputs to .build/fuzz-artifacts/ (never the repo).
# Prints executions per second and total executions per target; exits non-zero on any crash.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzSRT FuzzWebVTT FuzzASS FuzzJSONAnnotations FuzzAnnotationDetect
                                     FuzzLegacyEncoding FuzzEvents FuzzSignature FuzzPostings
                                     FuzzShazamFile FuzzSignatureFile)
swift build -c release --package-path Fuzz --scratch-path "$root/.build/fuzz" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library || exit 1
bin=$(swift build -c release --package-path Fuzz --scratch-path "$root/.build/fuzz" --show-bin-path)
mkdir -p .build/fuzz-artifacts .build/fuzz-logs
status=0 total=0
printf '%-22s %10s %12s  %s\n' target exec/s executions result > .build/fuzz-logs/summary
for t in "${targets[@]}"; do
    mkdir -p ".build/fuzz-corpus/$t"
    log=".build/fuzz-logs/$t.log"
    echo "== $t: ${seconds}s"
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=".build/fuzz-artifacts/$t-" \
        ".build/fuzz-corpus/$t" "Fuzz/corpus/$t" > "$log" 2>&1
    rc=$?
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
    rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -n 1)
    if [ $rc -eq 0 ]; then result=ok; else
        result="CRASH (exit $rc, see $log, input in .build/fuzz-artifacts/)"; status=1
        grep -m 3 -E "ERROR|Fatal error|panic|SUMMARY" "$log" | sed 's/^/    /'
    fi
    total=$((total + ${execs:-0}))
    printf '%-22s %10s %12s  %s\n' "$t" "${rate:-?}" "${execs:-?}" "$result" | tee -a .build/fuzz-logs/summary
done
echo "total executions: $total" | tee -a .build/fuzz-logs/summary
echo; cat .build/fuzz-logs/summary
exit $status
