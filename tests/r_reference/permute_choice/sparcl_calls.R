# sparcl 1.0.4's permutation choice of the L1 bound on the slides' design, 20 data seeds.
#
# The data are sparseclust.simulate.sparse_sim(rng=seed) for seed = 0..19 (3 x 20 rows,
# p = 100, q = 50, means 0 / 0.6 / 1.2), written by Python with 17 significant digits
# (R reads them bit for bit; choices.csv records each matrix's sum to confirm it):
#
#   python -c "from sparseclust.simulate import sparse_sim; import numpy as np
#   [np.savetxt(f'DIR/seed_{s:02d}.csv', sparse_sim(rng=s).data.to_numpy(), delimiter=',',
#    fmt='%.17g') for s in range(20)]"
#
# Run: Rscript sparcl_calls.R DIR OUTDIR   (needs sparcl 1.0.4 installed; nothing else)
#
# For every data seed and each R seed in R_SEEDS: set.seed(r_seed), then sparcl's
# defaults, KMeansSparseCluster.permute(x, K = 3) (nperms 25, the 10 log-spaced bounds),
# then the refit a sparcl user makes, KMeansSparseCluster(x, K = 3, wbounds = bestw).
# Writes OUTDIR/choices.csv (one row per data seed, R seed and bound).

args <- commandArgs(trailingOnly = TRUE)
datadir <- args[1]
outdir <- args[2]
suppressPackageStartupMessages(library(sparcl))
RNGkind("Mersenne-Twister", "Inversion", "Rejection")
R_SEEDS <- c(101, 202, 303)
truth <- rep(1:3, each = 20)

ari <- function(a, b) {
  tab <- table(a, b)
  comb2 <- function(v) sum(v * (v - 1) / 2)
  s <- comb2(tab)
  sa <- comb2(rowSums(tab))
  sb <- comb2(colSums(tab))
  e <- sa * sb / comb2(length(a))
  (s - e) / ((sa + sb) / 2 - e)
}

rows <- list()
for (seed in 0:19) {
  x <- as.matrix(read.csv(file.path(datadir, sprintf("seed_%02d.csv", seed)), header = FALSE))
  dimnames(x) <- NULL
  for (r_seed in R_SEEDS) {
    set.seed(r_seed + seed)
    perm <- KMeansSparseCluster.permute(x, K = 3, silent = TRUE)
    refit <- KMeansSparseCluster(x, K = 3, wbounds = perm$bestw, silent = TRUE)
    best <- which.max(perm$gaps)
    rows[[length(rows) + 1]] <- data.frame(
      seed = seed, r_seed = r_seed + seed, x_sum = sprintf("%.17g", sum(x)),
      i = seq_along(perm$wbounds), wbound = sprintf("%.17g", perm$wbounds),
      nnonzero = perm$nnonzerows, gap = sprintf("%.17g", perm$gaps),
      sdgap = sprintf("%.17g", perm$sdgaps), best = seq_along(perm$wbounds) == best,
      ari_refit = ari(refit[[1]]$Cs, truth)
    )
  }
}
write.csv(do.call(rbind, rows), file.path(outdir, "choices.csv"), row.names = FALSE, quote = FALSE)
