#!/bin/sh
# Run every fuzz target for SECONDS (default 600) each, one after the other.
# Seeds come from fuzz/seeds/T (read only); the growing corpus goes to
# fuzz/corpus_work/T and crashes to fuzz/artifacts/T (both git-ignored).
# Exits non-zero if any target crashed, hung or ran out of memory.
# Extra arguments after SECONDS go to libFuzzer (e.g. -jobs=4 -workers=4).
set -u
cd "$(dirname "$0")"
secs=${1:-600}
# The fuzzed crates have no unsafe code, and ASan makes them ~8x slower;
# FUZZ_SANITIZER=address (or memory, thread) brings a sanitizer back.
san=${FUZZ_SANITIZER:-none}
[ $# -gt 0 ] && shift
if ! cargo +nightly fuzz build -s "$san"; then
    echo "fuzz targets do not build" >&2
    exit 2
fi
status=0
failed=""
for t in argv restore tokenize proto_decode trace_opts nft_expr ipset daemon_frame; do
    mkdir -p "corpus_work/$t"
    echo "== $t: ${secs}s"
    if ! cargo +nightly fuzz run -s "$san" "$t" "corpus_work/$t" "seeds/$t" -- \
        -max_total_time="$secs" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "$@"; then
        status=1
        failed="$failed $t"
    fi
done
if [ $status -ne 0 ]; then
    echo "FAILED:$failed (see fuzz/artifacts/)" >&2
fi
exit $status
