#!/usr/bin/env Rscript
## bench/readme.R -- the README's speed table from one run of the bench
## scripts on the current code.
##
## Run from the package root:   Rscript bench/readme.R [raw-output-file]
##
## Each script that measures a row of the table (bench/optimum.R, nmf.R,
## plsa.R, tensor.R, lca.R, sntf.R, scale.R) is sourced, one after the other,
## in a fresh R process, with ASPECTR_BENCH_ONLY set to the sections the
## table needs; the child keeps the script's result objects in an RDS file,
## and this script turns them into the table's markdown rows (printed at the
## end, ready to paste into README.md). Within each script aspectr and its
## peer run on the same data in the same process, as the script describes
## (interleaved repeats and minima in optimum.R and scale.R, medians of
## repeats in nmf.R and lca.R, traces read off one budget run in plsa.R and
## tensor.R). The peers are installed by the scripts (bench/common.R); a row
## whose peer could not be installed says so.
##
## The whole output (each script's report, then the table) goes to the
## console and to the raw-output file (default
## bench/results/readme-<date>.txt).
##
## Environment:
##   ASPECTR_BENCH_SCALE    fraction of bench/scale.R's full size run here
##                          (default 0.1; the rows say so when below 1)
##   ASPECTR_BENCH_PARTS    regular expression of the parts to run (optimum,
##                          nmf, plsa, tensor, lca, sntf, scale; default all)
##   ASPECTR_BENCH_README_DIR  folder for the children's RDS files (default:
##                          a temporary folder); with ASPECTR_BENCH_README_REUSE=1
##                          parts whose RDS file is there are not run again
##                          (to re-format a finished run, or to combine parts
##                          run by several processes of this script that
##                          share the folder, each with its ASPECTR_BENCH_PARTS)
##   ASPECTR_BENCH_QUICK=1  passed on: small data (for testing this script)

source("bench/common.R")
args <- commandArgs(TRUE)
t_run <- proc.time()[["elapsed"]]
day <- format(Sys.time(), "%Y-%m-%d", tz = "UTC")
raw_file <- if (length(args)) args[1] else file.path("bench", "results", sprintf("readme-%s.txt", day))
dir.create(dirname(raw_file), showWarnings = FALSE, recursive = TRUE)
rds_dir <- Sys.getenv("ASPECTR_BENCH_README_DIR", tempfile("aspectr_readme_"))
dir.create(rds_dir, showWarnings = FALSE, recursive = TRUE)
reuse <- nzchar(Sys.getenv("ASPECTR_BENCH_README_REUSE"))
scale_frac <- as.numeric(Sys.getenv("ASPECTR_BENCH_SCALE", "0.1"))
parts_re <- Sys.getenv("ASPECTR_BENCH_PARTS", "")

raw <- file(raw_file, "w")
## (web addresses in the scripts' messages, e.g. of a failed install, are
## not written to the raw file)
say <- function(...) {
  txt <- paste0(...)
  cat(txt)
  cat(gsub("[a-z]+://[^[:space:]'\"]+", "<address>", txt), file = raw)
}
say(sprintf("bench/readme.R, %s UTC\n", format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC")))
say(sprintf("aspectr %s; R %s; BLAS: %s; cores: %d; load average at start: %s\n",
            tryCatch(as.character(utils::packageVersion("aspectr")), error = function(e) "not installed"),
            getRversion(), basename(extSoftVersion()[["BLAS"]] %||% "?"), parallel::detectCores(),
            paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
if (quick) say("mode: QUICK (ASPECTR_BENCH_QUICK set): small data, not the README's figures\n")

## The parts: script, sections (ASPECTR_BENCH_ONLY), objects kept, extra
## environment.
parts <- list(
  lca = list(script = "bench/lca.R", only = "^lca$", keep = "tab"),
  tensor = list(script = "bench/tensor.R", only = "comparison", keep = c("res", "ttt", "t_ref", "target", "tn")),
  optimum = list(script = "bench/optimum.R", only = "", keep = c("tabs", "frob")),
  plsa = list(script = "bench/plsa.R", only = "^synthetic$", keep = c("out", "syn_dims")),
  sntf = list(script = "bench/sntf.R", only = "symnmf|points", keep = c("res", "sc")),
  nmf = list(script = "bench/nmf.R", only = "", keep = "allres", env = c(ASPECTR_BENCH_NO_WAIT = "1")),
  scale = list(script = "bench/scale.R", only = "^(plsa|nmf|kl)$",
               keep = c("scale_res", "nnz_total", "total_mb", "n_shards", "docs", "terms", "k", "scale"),
               env = c(ASPECTR_BENCH_SCALE = format(scale_frac)))
)
if (nzchar(parts_re)) parts <- parts[grepl(parts_re, names(parts))]

## Sources one script in a fresh R process; its output goes to the console
## and the raw file; returns the kept objects (NULL when the child failed).
run_part <- function(name, p) {
  rds <- file.path(rds_dir, paste0(name, ".rds"))
  if (reuse && file.exists(rds)) {
    say(sprintf("\n#### %s: results reused from %s\n", p$script, rds))
    return(readRDS(rds))
  }
  child <- tempfile("readme_child_", fileext = ".R")
  log <- tempfile("readme_log_", fileext = ".txt")
  on.exit(unlink(c(child, log)))
  writeLines(c(sprintf('source("%s")', p$script),
               sprintf('saveRDS(mget(c(%s), envir = globalenv(), ifnotfound = list(NULL)), "%s")',
                       paste(sprintf('"%s"', p$keep), collapse = ", "), rds)), child)
  env <- c(sprintf("ASPECTR_BENCH_ONLY=%s", shQuote(p$only)),
           if (length(p$env)) sprintf("%s=%s", names(p$env), shQuote(p$env)))
  say(sprintf("\n#### %s (ASPECTR_BENCH_ONLY=\"%s\"%s); load average %s\n", p$script, p$only,
              if (length(p$env)) paste0(", ", paste(sprintf("%s=%s", names(p$env), p$env), collapse = ", ")) else "",
              loadavg()))
  t0 <- proc.time()[["elapsed"]]
  unlink(rds)
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(child)), stdout = log, stderr = log,
          env = env, wait = TRUE)
  out <- readLines(log, warn = FALSE)
  say(paste0(out, "\n", collapse = ""))
  say(sprintf("#### %s took %.0f s\n", p$script, proc.time()[["elapsed"]] - t0))
  if (file.exists(rds)) readRDS(rds) else NULL
}
## --vanilla drops R_LIBS_USER but keeps R_LIBS: the children see the
## libraries this process sees
Sys.setenv(R_LIBS = paste(.libPaths(), collapse = ":"))
## --vanilla also drops the site profile, where R's CRAN repository is set:
## the children get this process's, to install missing peers
if (!identical(unname(getOption("repos")["CRAN"] %||% "@CRAN@"), "@CRAN@"))
  Sys.setenv(ASPECTR_BENCH_REPOS = getOption("repos")[["CRAN"]])
results <- list()
for (nm in names(parts)) results[[nm]] <- run_part(nm, parts[[nm]])

## ---------------------------------------------------------------------------
## The table
## ---------------------------------------------------------------------------

## figures: 2 significant digits (3 at 100 and above are shown whole)
sig <- function(x, d = 2) {
  vapply(x, function(v) {
    if (!is.finite(v)) return("NA")
    if (abs(v) >= 100) return(formatC(round(v), format = "d", big.mark = ""))
    trimws(formatC(signif(v, d), format = "fg", digits = d))
  }, "")
}
rng <- function(x, d = 2) {
  x <- x[is.finite(x)]
  if (!length(x)) return("NA")
  a <- sig(min(x), d); b <- sig(max(x), d)
  if (a == b) a else paste0(a, "-", b)
}
no_peer <- "peer not installable here"
rows_out <- character()
emit <- function(task, data, asp, peer) {
  rows_out <<- c(rows_out, sprintf("| %s | %s | %s | %s |", task, data, asp, peer))
}
missing_part <- function(task, data, part) {
  emit(task, data, if (part %in% names(parts)) sprintf("not measured (bench/%s.R failed in this run)", part) else
    sprintf("not run (ASPECTR_BENCH_PARTS)"), "")
}

## optimum.R -------------------------------------------------------------
op <- results$optimum
find_tab <- function(pattern) {
  if (is.null(op$tabs)) return(NULL)
  i <- grep(pattern, names(op$tabs))
  if (length(i)) op$tabs[[i[1]]] else NULL
}
val <- function(tab, method, col) {
  if (is.null(tab)) return(NA_real_)
  i <- match(method, tab$method)
  if (is.na(i)) NA_real_ else tab[[col]][i]
}
ns_note <- NULL
ap <- find_tab("^pLSA KL, AssociatedPress")
if (!is.null(ap)) {
  title <- grep("^pLSA KL, AssociatedPress", names(op$tabs), value = TRUE)[1]
  nnz_ap <- as.numeric(sub(".*, ([0-9]+) non-zeros.*", "\\1", title))
  k_ap <- as.numeric(sub(".*k = ([0-9]+).*", "\\1", title))
  dims_ap <- sub(".*AssociatedPress ([0-9]+ x [0-9]+),.*", "\\1", title)
  cd <- val(ap, "plsa cd (default)", "to_target_s")
  em <- val(ap, "plsa em", "to_target_s")
  ft <- val(ap, "fastTopics scd", "to_target_s")
  nk <- val(ap, "nmf kl cd", "to_target_s")
  peer <- if (!"fastTopics scd" %in% ap$method) paste0("fastTopics: ", no_peer) else if (is.finite(ft))
    sprintf("fastTopics scd %s s (ratio %s)", sig(ft), sig(cd / ft)) else
      sprintf("fastTopics scd does not reach it in %d iterations (%s s)", val(ap, "fastTopics scd", "iterations"),
              sig(val(ap, "fastTopics scd", "time_s")))
  emit(sprintf("pLSA (KL, coordinate descent), k = %d", k_ap), sprintf("AssociatedPress, %s", sub(" x ", " x ", dims_ap)),
       sprintf("%s s to the divergence %d EM iterations reach (EM: %s s)", sig(cd), val(ap, "plsa em", "iterations"), sig(em)),
       sprintf("%s (`bench/optimum.R`); aspectr's KL-NMF coordinate descent %s s", peer, sig(nk)))
  ns_em <- 1e9 * val(ap, "plsa em", "time_s") / val(ap, "plsa em", "iterations") / (nnz_ap * k_ap)
  ns_cd <- 1e9 * val(ap, "plsa cd (default)", "time_s") / val(ap, "plsa cd (default)", "iterations") / (nnz_ap * k_ap)
  ns_note <- sprintf("One EM iteration of `plsa()` costs about %s ns per non-zero and topic,\none coordinate-descent iteration about %s ns (AssociatedPress, k = %d),\nwhich needs far fewer of them.",
                     sig(ns_em), sig(ns_cd), k_ap)
} else missing_part("pLSA (KL, coordinate descent), k = 20", "AssociatedPress", "optimum")

## plsa.R (synthetic) -----------------------------------------------------
syn <- results$plsa$out$synthetic
if (!is.null(syn)) {
  tb <- syn$table
  tt <- suppressWarnings(as.numeric(tb$time_to_target_s))
  a1 <- which(startsWith(tb$method, "aspectr") & tb$threads == 1)[1]
  a2 <- which(startsWith(tb$method, "aspectr") & tb$threads == 2)[1]
  f1 <- which(startsWith(tb$method, "fastTopics") & tb$threads == 1)[1]
  f2 <- which(startsWith(tb$method, "fastTopics") & tb$threads == 2)[1]
  res_syn <- syn$results
  nnz_syn <- NA
  dd <- results$plsa$syn_dims
  peer <- if (is.na(f1)) paste0("fastTopics: ", no_peer) else
    sprintf("fastTopics scd %s s (%sx; 2 threads %s s)", if (is.finite(tt[f1])) sig(tt[f1]) else tb$time_to_target_s[f1],
            if (is.finite(tt[f1])) sig(tt[f1] / tt[a1]) else tb$ratio_to_aspectr_t1[f1],
            if (is.na(f2)) "NA" else if (is.finite(tt[f2])) sig(tt[f2]) else tb$time_to_target_s[f2])
  emit("pLSA (KL, coordinate descent), k = 20",
       sprintf("synthetic %d x %d (`bench/plsa.R`)", dd[1], dd[2]),
       sprintf("%s s to fastTopics' objective after its %s iterations (2 threads %s s)", sig(tt[a1]),
               if (!is.na(f1)) tb$budget[f1] else "?", sig(tt[a2])),
       peer)
} else missing_part("pLSA (KL, coordinate descent), k = 20", "synthetic 20000 x 20000", "plsa")

## optimum.R: SQUAREM ------------------------------------------------------
ts <- find_tab("^pLSA Tsallis"); te <- find_tab("^pLSA tempered KL")
if (!is.null(ts) && !is.null(te)) {
  emit("pLSA Tsallis (q = 0.5) and tempered KL (beta = 0.9), SQUAREM, k = 20", "AssociatedPress",
       sprintf("%sx and %sx the time of plain q-EM and tempered EM to the objective of their %d iterations",
               sig(val(ts, "squarem", "ratio_to_em")), sig(val(te, "squarem", "ratio_to_em")), val(ts, "em", "iterations")),
       "no R peer")
} else missing_part("pLSA Tsallis and tempered KL, SQUAREM", "AssociatedPress", "optimum")

## optimum.R: KL CP of a planted tensor --------------------------------------
td <- find_tab("^KL CP, planted .*dense array"); tsp <- find_tab("^KL CP, planted .*sparse tensor")
if (!is.null(td)) {
  dims_t <- sub("^KL CP, planted (.*) tensor.*", "\\1", grep("^KL CP, planted .*dense", names(op$tabs), value = TRUE)[1])
  cds <- c(val(td, "plsa cd (default)", "to_target_s"), val(tsp, "plsa cd (default)", "to_target_s"))
  ems <- c(val(td, "plsa em", "to_target_s"), val(tsp, "plsa em", "to_target_s"))
  tgt <- val(td, "plsa em", "final")
  peer <- if (!"nnTensor NTF KL" %in% td$method) paste0("nnTensor: ", no_peer) else {
    fin <- val(td, "nnTensor NTF KL", "final")
    sprintf("nnTensor `NTF(algorithm = \"KL\")` %s s for its budget, %s", sig(val(td, "nnTensor NTF KL", "time_s")),
            if (fin <= tgt) "reaching it" else sprintf("ending at D = %s against %s", sig(fin, 3), sig(tgt, 3)))
  }
  emit("KL CP (coordinate descent), k = 5", sprintf("planted %s (dense and sparse)", dims_t),
       sprintf("%s s to the divergence %d EM iterations reach (EM: %s s, ratio %s)", rng(cds),
               val(td, "plsa em", "iterations"), rng(ems), rng(cds / ems)),
       peer)
} else missing_part("KL CP (coordinate descent), k = 5", "planted 100 x 80 x 60", "optimum")

## nmf.R -------------------------------------------------------------------
ar <- results$nmf$allres
pick <- function(dn, grp, id, th = 1L) {
  if (is.null(ar)) return(NULL)
  s <- ar[ar$data == dn & ar$group == grp & ar$id == id & ar$threads == th, ]
  if (nrow(s)) s[1, ] else NULL
}
tm <- function(r) if (is.null(r)) NA_real_ else r$time
it <- function(r) if (is.null(r)) NA_integer_ else as.integer(r$n_star)
have_id <- function(id) !is.null(ar) && id %in% ar$id
nmf_data <- c(AP = "sparse AssociatedPress", dense = "dense 2000 x 1000")
if (!is.null(ar)) {
  for (dn in c("AP", "dense")) {
    k <- if (dn == "AP") 20 else 10
    a <- pick(dn, "KL", "asp_kl_s"); ad <- pick(dn, "KL", "asp_kl_d"); f <- pick(dn, "KL", "ft_scd")
    mu <- pick(dn, "KL", "asp_klmu_s")
    emit(sprintf("KL NMF (coordinate descent), k = %d", k), nmf_data[[dn]],
         sprintf("%s s, %d iterations (random start; %s s from NNDSVDa)", sig(tm(a)), it(a), sig(tm(ad))),
         sprintf("%s; multiplicative updates %s s",
                 if (have_id("ft_scd")) sprintf("fastTopics scd %s s (ratio %s)", sig(tm(f)), sig(tm(a) / tm(f))) else
                   paste0("fastTopics: ", no_peer), sig(tm(mu))))
  }
} else missing_part("KL NMF (coordinate descent)", "AssociatedPress and dense", "nmf")

## optimum.R: dense Frobenius NMF against RcppML -----------------------------
fr <- op$frob
if (length(fr) == 2) {
  emit("Frobenius NMF (HALS, defaults), k = 20",
       "dense 2000 x 1000, planted rank 20 + noise: U(0, 1) factors (ill-conditioned) / exponential",
       sprintf("%s s / %s s to RcppML's final error (`bench/optimum.R`)", rng(fr[[1]]$aspectr_s), rng(fr[[2]]$aspectr_s)),
       sprintf("RcppML default fit %s s / %s s (ratios %s / %s)", rng(fr[[1]]$rcppml_s), rng(fr[[2]]$rcppml_s),
               rng(fr[[1]]$ratio), rng(fr[[2]]$ratio)))
} else if (is.null(op)) missing_part("Frobenius NMF (HALS, defaults), k = 20", "dense 2000 x 1000, planted rank 20 + noise", "optimum") else
  emit("Frobenius NMF (HALS, defaults), k = 20", "dense 2000 x 1000, planted rank 20 + noise", "", paste0("RcppML: ", no_peer))

if (!is.null(ar)) {
  ## Frobenius MU against RcppPlanc's MU
  am <- c(tm(pick("AP", "MU", "asp_mu_s")), tm(pick("dense", "MU", "asp_mu_s")))
  pm <- c(tm(pick("AP", "MU", "planc_mu")), tm(pick("dense", "MU", "planc_mu")))
  emit("Frobenius NMF (MU)", "sparse and dense", sprintf("%s s", rng(am)),
       if (have_id("planc_mu")) sprintf("RcppPlanc %s s (%s-%sx)", rng(pm), sig(min(pm / am)), sig(max(pm / am))) else
         paste0("RcppPlanc: ", no_peer))
  ## HALS (+ extrapolation), sparse AP
  a <- pick("AP", "ALS", "asp_hals_s"); ad <- pick("AP", "ALS", "asp_hals_d")
  ph <- pick("AP", "ALS", "planc_hals"); ph2 <- pick("AP", "ALS", "planc_hals", 2L); a2 <- pick("AP", "ALS", "asp_hals_s", 2L)
  ml <- pick("AP", "ALS", "rcppml")
  emit("Frobenius NMF (HALS + extrapolation), k = 20", "sparse AssociatedPress",
       sprintf("%s s, %d iterations (random start; %s s from NNDSVD)", sig(tm(a)), it(a), sig(tm(ad))),
       paste0(if (have_id("planc_hals")) sprintf("RcppPlanc HALS %s s, %d iterations (ratio %s; %s from NNDSVD; %s with 2 threads)",
                                                  sig(tm(ph)), it(ph), sig(tm(a) / tm(ph)), sig(tm(ad) / tm(ph)), sig(tm(a2) / tm(ph2)))
              else paste0("RcppPlanc: ", no_peer), "; ",
              if (have_id("rcppml")) sprintf("RcppML %s s", sig(tm(ml))) else paste0("RcppML: ", no_peer)))
  ## HALS (+ extrapolation), dense
  a <- pick("dense", "ALS", "asp_hals_s"); a2 <- pick("dense", "ALS", "asp_hals_s", 2L); ad <- pick("dense", "ALS", "asp_hals_d")
  ml <- pick("dense", "ALS", "rcppml"); pb <- pick("dense", "ALS", "planc_bpp")
  emit("Frobenius NMF (HALS + extrapolation), k = 10", "dense 2000 x 1000",
       sprintf("%s s, %d iterations (2 threads %s s; %s s from NNDSVD)", sig(tm(a)), it(a), sig(tm(a2)), sig(tm(ad))),
       paste0(if (have_id("rcppml")) sprintf("RcppML %s s, %d iterations (ratio %s; %s from NNDSVD)", sig(tm(ml)), it(ml),
                                              sig(tm(a) / tm(ml)), sig(tm(ad) / tm(ml)))
              else paste0("RcppML: ", no_peer), "; ",
              if (have_id("planc_bpp")) sprintf("RcppPlanc ANLS-BPP %s s", sig(tm(pb))) else paste0("RcppPlanc: ", no_peer)))
} else missing_part("Frobenius NMF (MU, HALS)", "AssociatedPress and dense", "nmf")

## tensor.R ------------------------------------------------------------------
te <- results$tensor
if (!is.null(te$res)) {
  tref <- te$t_ref
  tt_of <- function(m) if (is.null(te$ttt[[m]])) NA_real_ else te$ttt[[m]][["time"]]
  peers <- c()
  rdf <- intersect(c("RDFTensor::cp_apr mu", "RDFTensor::cp_apr pqnr"), names(te$res))
  if (length(rdf)) {
    r <- vapply(rdf, tt_of, 1) / tref
    alg <- sub("RDFTensor::cp_apr ", "", rdf)
    peers <- c(peers, if (any(is.finite(r))) sprintf("RDFTensor `cp_apr` %s", paste(sprintf("%s %sx slower", alg, sig(r)), collapse = ", ")) else
      "RDFTensor `cp_apr` does not reach the target in its budget")
  } else peers <- c(peers, paste0("RDFTensor: ", no_peer))
  if ("nnTensor::NTF KL" %in% names(te$res)) {
    r <- tt_of("nnTensor::NTF KL") / tref
    fin <- te$res[["nnTensor::NTF KL"]]$final
    peers <- c(peers, if (is.finite(r)) sprintf("nnTensor `NTF` %sx slower", sig(r)) else
      if (!is.finite(fin) || fin > te$res[["nnTensor::NTF KL"]]$trace$obj[1]) sprintf("nnTensor `NTF` diverges (divergence %s after %d iterations)",
                                                                  sub("e[+]0?", "e", formatC(fin, format = "e", digits = 1)), as.integer(te$res[["nnTensor::NTF KL"]]$iters)) else
        "nnTensor `NTF` does not reach the target in its budget")
  }
  emit("KL CP of a 3-way tensor, k = 5",
       sprintf("%s, %sk non-zeros", paste(te$tn$dims, collapse = " x "), sig(length(te$tn$values) / 1000)),
       sprintf("%s s (`bench/tensor.R`)", sig(tref)), paste(peers, collapse = "; "))
} else missing_part("KL CP of a 3-way tensor, k = 5", "200 x 150 x 100", "tensor")

## lca.R ---------------------------------------------------------------------
lt <- results$lca$tab
if (!is.null(lt)) {
  lrow <- function(sets) {
    a <- lt[lt$method == "aspectr (1 thr)" & lt$data %in% sets, ]
    tm_of <- function(m) {
      s <- lt[lt$method == m, ]
      s$time_s[match(paste(a$data, a$k), paste(s$data, s$k))]
    }
    list(a = a$time_s, pp = tm_of("poLCAParallel (1 thr)") / a$time_s, pl = tm_of("poLCA") / a$time_s,
         dll = a$llik - tm_of_llik(a))
  }
  tm_of_llik <- function(a) {
    s <- lt[lt$method == "poLCA", ]
    s$llik[match(paste(a$data, a$k), paste(s$data, s$k))]
  }
  small <- lrow(c("gss82", "values", "carcinoma"))
  has_pp <- any(lt$method == "poLCAParallel (1 thr)"); has_pl <- any(lt$method == "poLCA")
  emit("latent classes, 10 starts (EM with SQUAREM)", "poLCA `gss82`, `values`, `carcinoma`",
       sprintf("%s ms", rng(1000 * small$a)),
       paste0(if (has_pp) sprintf("poLCAParallel (1 thread) %sx slower", rng(small$pp)) else paste0("poLCAParallel: ", no_peer),
              ", ", if (has_pl) sprintf("poLCA %sx", rng(small$pl)) else paste0("poLCA: ", no_peer)))
  big_sets <- unique(lt$data[!lt$data %in% c("gss82", "values", "carcinoma")])
  bg <- lapply(big_sets, function(s) lrow(s))
  emit("latent classes, 10 starts (EM with SQUAREM)", "`election` (12 items), 20000 x 10 items",
       paste(vapply(bg, function(b) sprintf("%s s", sig(b$a)), ""), collapse = ", "),
       paste0(if (has_pp) sprintf("poLCAParallel (1 thread) %s slower", paste(vapply(bg, function(b) paste0(sig(b$pp), "x"), ""), collapse = ", ")) else
         paste0("poLCAParallel: ", no_peer), "; ",
         if (has_pl) sprintf("poLCA %s", paste(vapply(bg, function(b) paste0(sig(b$pl), "x"), ""), collapse = ", ")) else paste0("poLCA: ", no_peer)))
  lca_dll <- range(c(small$dll, unlist(lapply(bg, `[[`, "dll"))), na.rm = TRUE)
} else missing_part("latent classes, 10 starts", "poLCA data", "lca")

## sntf.R --------------------------------------------------------------------
sn <- results$sntf
if (!is.null(sn)) {
  sr <- sn$res
  if (!is.null(sr)) {
    an <- sr[sr$aspectr == "anls", ]
    emit("symmetric NMF (ANLS), k = 10", sprintf("15-NN affinity graphs, %s points", paste(unique(an$n), collapse = " and ")),
         sprintf("%s s", rng(an$aspectr_time)),
         sprintf("RcppPlanc `symNMF` (Gauss-Newton) %sx slower; its ANLS-BPP %sx slower",
                 rng(an$ratio[an$peer == "RcppPlanc gnsym"]), rng(an$ratio[an$peer == "RcppPlanc anlsbpp"])))
  } else emit("symmetric NMF (ANLS), k = 10", "15-NN affinity graphs, 3000 and 6000 points", "", paste0("RcppPlanc: ", no_peer))
  sc <- sn$sc
  if (!is.null(sc)) {
    last <- sc[nrow(sc), ]
    emit("multi-way clustering (`sntf`, k = 3)",
         sprintf("%d points on lines, %sk sampled triples (%sk kept)", last$n, sig(last$n_tuples / 1000, 3), sig(last$nnz / 1000)),
         sprintf("%s ms per iteration", sig(last$ms_per_iter_1t)),
         sprintf("no R peer; cost x%s per doubling of n", rng(sc$ratio_per_doubling[-1])))
  }
} else missing_part("symmetric NMF and multi-way clustering", "", "sntf")

## scale.R -------------------------------------------------------------------
scl <- results$scale
if (!is.null(scl$scale_res)) {
  sz <- sprintf("%d x %d, %s non-zeros in %d `.shard` files (%.0f MB)%s", as.integer(scl$n_shards * scl$docs),
                as.integer(scl$terms), sub("e[+]0?", "e", formatC(scl$nnz_total, format = "e", digits = 1)), as.integer(scl$n_shards),
                scl$total_mb, if (scl$scale < 1) sprintf("; %s of `bench/scale.R`'s full size", format(scl$scale)) else "")
  lab <- c(plsa = "pLSA (KL, its default coordinate descent) of sharded data, k = 20", nmf = "NMF (Frobenius HALS, the defaults) of the same shards, k = 20",
           kl = "NMF (KL coordinate descent) of the same shards, k = 20")
  first <- TRUE
  for (s in names(lab)) {
    r <- scl$scale_res[[s]]
    if (is.null(r)) next
    emit(lab[[s]], if (first) sz else "as above",
         sprintf("out of core %s s per iteration, %.0f MB peak; 2 PSOCK workers (`shard_cluster(2)`) %s s", sig(r[[2]][3]), r[[2]][1], sig(r[[3]][3])),
         sprintf("in memory %s s, %.0f MB (`bench/scale.R`)", sig(r[[1]][3]), r[[1]][1]))
    first <- FALSE
  }
} else missing_part("pLSA and NMF of sharded data", "", "scale")

## ---------------------------------------------------------------------------
say("\n", strrep("=", 78), "\nREADME speed table (bench/readme.R)\n", strrep("=", 78), "\n\n")
say("| task | data | aspectr | fastest peer |\n|---|---|---|---|\n")
say(paste0(rows_out, "\n", collapse = ""))
if (!is.null(ns_note)) say("\n", ns_note, "\n")
if (exists("lca_dll")) say(sprintf("\n(lca: aspectr's log-likelihood minus poLCA's: %+.2g to %+.2g)\n", lca_dll[1], lca_dll[2]))
say(sprintf("\nwhole run: %.0f s; load average at the end: %s\n", proc.time()[["elapsed"]] - t_run,
            paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
close(raw)
cat(sprintf("raw output written to %s\n", raw_file))
