#!/usr/bin/env bash
# Builds aspectr with AddressSanitizer and UndefinedBehaviorSanitizer into a
# temporary library (never the site library) and runs the test suite against
# that build with the ASan runtime preloaded. Exits non-zero when the build
# or the tests fail, or when the output holds any sanitizer report.
#
#   bash tools/sanitize.sh            # whole suite
#   bash tools/sanitize.sh nmf        # only tests/testthat/test-nmf*.R
#
# Needs gcc/g++ with libasan and libubsan. Not part of the CI run (it is
# several times slower than a normal build and test run).
set -uo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/aspectr-sanitize.XXXXXX")"
lib="$work/lib"; mkdir -p "$lib"
log="$work/output.log"
trap 'rm -rf "$work"' EXIT

san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cat > "$work/Makevars" <<MK
CFLAGS=-g -O1 $san
CXXFLAGS=-g -O1 $san
CXX11FLAGS=-g -O1 $san
CXX14FLAGS=-g -O1 $san
CXX17FLAGS=-g -O1 $san
LDFLAGS=$san
MK

asan="$(gcc -print-file-name=libasan.so)"
ubsan="$(gcc -print-file-name=libubsan.so)"
for f in "$asan" "$ubsan"; do
  if [ ! -e "$f" ]; then echo "sanitize.sh: $f not found (install the gcc sanitizer runtimes)" >&2; exit 2; fi
done

start=$(date +%s)
echo "== building with $san into $lib"
# build from a copy so that no object files land in the checkout
src="$work/src"; mkdir -p "$src"
tar --exclude='./.git' --exclude='*.o' --exclude='*.so' -cf - . | tar -xf - -C "$src"
if ! R_MAKEVARS_USER="$work/Makevars" R CMD INSTALL --no-test-load -l "$lib" "$src" > "$work/install.log" 2>&1; then
  tail -50 "$work/install.log"; echo "sanitize.sh: build failed" >&2; exit 1
fi
grep -q -- "-fsanitize=address" "$work/install.log" || { echo "sanitize.sh: the sanitizer flags were not used" >&2; exit 1; }

echo "== running the tests against the sanitized build"
# R leaks by design (detect_leaks=0); R's own stack handling needs
# detect_stack_use_after_return=0 and a non-fatal odr check.
export ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0:detect_stack_use_after_return=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
LD_PRELOAD="$asan $ubsan" R_LIBS="$lib${R_LIBS:+:$R_LIBS}" NOT_CRAN=true \
  Rscript --vanilla -e '
    f <- commandArgs(TRUE)
    library(testthat); library(aspectr, lib.loc = .libPaths()[1])
    set_max_fails(Inf)  # run every file even when some tests fail
    stopifnot(startsWith(find.package("aspectr"), .libPaths()[1]))
    res <- as.data.frame(test_dir("tests/testthat", package = "aspectr", load_package = "installed",
                                  filter = if (length(f) && nzchar(f[1])) f[1] else NULL,
                                  reporter = ProgressReporter$new(show_praise = FALSE), stop_on_failure = FALSE))
    cat(sprintf("\n%d passed, %d failed, %d skipped\n", sum(res$passed), sum(res$failed) + sum(res$error), sum(res$skipped)))
  ' "$filter" > "$log" 2>&1
status=$?
grep -E "^(\[ FAIL|[0-9]+ passed)" "$log" | tail -2
elapsed=$(( $(date +%s) - start ))
reports=$(grep -c -E "runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log")
echo "== sanitizer reports: $reports; test run exit status: $status; ${elapsed}s"
if [ "$reports" -gt 0 ]; then
  grep -n -A 30 -E "runtime error:|ERROR: AddressSanitizer" "$log" | head -200
  exit 1
fi
exit $status
