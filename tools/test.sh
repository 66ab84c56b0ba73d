#!/usr/bin/env bash
# Runs aspectr's test suite against a fresh install of this checkout and
# prints the totals as the last line: "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/install.sh
Rscript --vanilla tools/run-tests.R
