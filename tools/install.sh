#!/usr/bin/env bash
# Builds and installs aspectr from this checkout (clean objects first, so a
# debug build left by devtools/roxygen is never reused).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f src/*.o src/*.so src/*.dll
R CMD INSTALL --no-multiarch . >/tmp/aspectr-install.log 2>&1 || { cat /tmp/aspectr-install.log; exit 1; }
rm -f src/*.o src/*.so src/*.dll
echo "install: aspectr $(Rscript -e 'cat(as.character(packageVersion("aspectr")))') installed"
