#!/usr/bin/env bash
# Installs what building, checking and testing aspectr needs on a Debian
# machine with R: Debian's prebuilt r-cran-* packages where they exist (fast),
# CRAN for anything still missing, plus pandoc and pngquant (vignettes) and
# qpdf (R CMD check --as-cran). Safe to run repeatedly; does nothing when all is
# present. Needs root (or sudo) for apt-get.
set -euo pipefail

r_pkgs=(Rcpp RcppArmadillo cli rlang generics tibble Matrix testthat roxygen2 hdf5r mirai
        knitr rmarkdown slam tm quadprog future future.apply poLCA topicmodels ggplot2 NMF
        SeuratObject cluster tidytext jsonlite glca seededlda)
# Bioconductor packages the tests use (Debian's r-bioc-*; not on CRAN, so
# there is no fallback: their tests skip when they are absent)
bioc_pkgs=(Biobase SummarizedExperiment SingleCellExperiment)
missing=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${r_pkgs[@]}")
missing_bioc=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${bioc_pkgs[@]}")
need_sys=()
command -v pandoc >/dev/null 2>&1 || need_sys+=(pandoc)
command -v qpdf >/dev/null 2>&1 || need_sys+=(qpdf)
# (pngquant stores the vignettes' figures with 256 colours: without it the
# built vignettes are about 230 KB larger and R CMD check notes the size)
command -v pngquant >/dev/null 2>&1 || need_sys+=(pngquant)
# (a real headless browser for the test of explore()'s page)
command -v chromium >/dev/null 2>&1 || need_sys+=(chromium)

if [ -n "$missing" ] || [ -n "$missing_bioc" ] || [ ${#need_sys[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
  if command -v apt-get >/dev/null 2>&1; then
    debs=("${need_sys[@]}")
    for p in $missing; do debs+=("r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"); done
    for p in $missing_bioc; do debs+=("r-bioc-$(echo "$p" | tr '[:upper:]' '[:lower:]')"); done
    # topicmodels builds from CRAN against the GNU Scientific Library
    case " $missing " in *" topicmodels "*) debs+=(libgsl-dev) ;; esac
    echo "deps: installing with apt-get: ${debs[*]}"
    $SUDO apt-get update -qq || true
    # install those Debian has; the rest falls back to CRAN below
    avail=()
    for d in "${debs[@]}"; do
      if apt-cache show "$d" >/dev/null 2>&1; then avail+=("$d"); fi
    done
    if [ ${#avail[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${avail[@]}" >/dev/null
    fi
  fi
  still=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${r_pkgs[@]}")
  if [ -n "$still" ]; then
    echo "deps: installing from CRAN: $still"
    # the CRAN repository R is configured with (no address is named here)
    Rscript -e 'install.packages(commandArgs(TRUE), Ncpus = 2)' $still
  fi
  still_bioc=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${bioc_pkgs[@]}")
  if [ -n "$still_bioc" ]; then
    echo "deps: not available here (their tests will skip): $still_bioc"
  fi
fi
echo "deps: all present"
