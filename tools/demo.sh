#!/usr/bin/env bash
# Installs everything needed, then runs the package's main job: a pLSA topic
# analysis of the State of the Union addresses shipped with aspectr.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/install.sh
Rscript --vanilla tools/demo.R
