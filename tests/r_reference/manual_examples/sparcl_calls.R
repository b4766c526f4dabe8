# The examples of sparcl 1.0.4's manual (man/*.Rd), run as written, with their outputs
# recorded for tests/_sparse/test_sparcl_examples.py.
#
# Run: Rscript sparcl_calls.R OUTDIR   (needs sparcl 1.0.4 installed; nothing else)
#
# Writes OUTDIR/x_<example>.csv (the data each example generates with R's RNG, 17
# significant digits: read back bit for bit; y, where an example has classes, is
# recorded in values.csv) and OUTDIR/values.csv (long format: name, i, value).

args <- commandArgs(trailingOnly = TRUE)
outdir <- args[1]
suppressPackageStartupMessages(library(sparcl))
RNGkind("Mersenne-Twister", "Inversion", "Rejection")

vals <- list()
put <- function(name, v) {
  v <- as.vector(v)
  vals[[length(vals) + 1]] <<- data.frame(
    name = name, i = seq_along(v),
    value = if (is.numeric(v)) sprintf("%.17g", v) else as.character(v)
  )
}
save_x <- function(name, x) {
  write.table(format(x, digits = 17), file.path(outdir, paste0("x_", name, ".csv")),
    sep = ",", row.names = FALSE, col.names = FALSE, quote = FALSE)
}
put_perm <- function(prefix, perm) {
  put(paste0(prefix, ".wbounds"), perm$wbounds)
  put(paste0(prefix, ".tots"), perm$tots)
  put(paste0(prefix, ".nnonzerows"), perm$nnonzerows)
  put(paste0(prefix, ".gaps"), perm$gaps)
  put(paste0(prefix, ".sdgaps"), perm$sdgaps)
  put(paste0(prefix, ".bestw"), perm$bestw)
}
put_km <- function(prefix, out) {
  for (j in seq_along(out)) {
    put(sprintf("%s.%d.wbound", prefix, j), out[[j]]$wbound)
    put(sprintf("%s.%d.ws", prefix, j), out[[j]]$ws)
    put(sprintf("%s.%d.Cs", prefix, j), out[[j]]$Cs)
  }
}
put_hc <- function(prefix, hc) {
  put(paste0(prefix, ".ws"), hc$ws)
  put(paste0(prefix, ".crit"), hc$crit)
  put(paste0(prefix, ".merge"), hc$hc$merge)
  put(paste0(prefix, ".height"), hc$hc$height)
  put(paste0(prefix, ".order"), hc$hc$order)
}

# ---- ?KMeansSparseCluster
set.seed(11)
x <- matrix(rnorm(50 * 70), ncol = 70)
x[1:25, 1:20] <- x[1:25, 1:20] + 1
x <- scale(x, TRUE, TRUE)
save_x("km", x)
km.perm <- KMeansSparseCluster.permute(x, K = 2, wbounds = seq(3, 7, len = 15), nperms = 5,
  silent = TRUE)
put_perm("km.perm", km.perm)
km.out <- KMeansSparseCluster(x, K = 2, wbounds = km.perm$bestw, silent = TRUE)
put_km("km.best", km.out)
km.out <- KMeansSparseCluster(x, K = 2, wbounds = seq(1.3, 4, len = 8), silent = TRUE)
put_km("km.path", km.out)
km.out <- KMeansSparseCluster(x, wbounds = 2:7, centers = x[c(1, 3, 5), ], silent = TRUE)
put_km("km.centers", km.out)

# ---- ?KMeansSparseCluster.permute
set.seed(11)
x <- matrix(rnorm(50 * 70), ncol = 70)
x[1:25, 1:10] <- x[1:25, 1:10] + 1.5
x <- scale(x, TRUE, TRUE)
save_x("kmp", x)
km.perm <- KMeansSparseCluster.permute(x, K = 2, wbounds = seq(2, 5, len = 8), nperms = 3,
  silent = TRUE)
put_perm("kmp.perm", km.perm)
km.out <- KMeansSparseCluster(x, K = 2, wbounds = km.perm$bestw, silent = TRUE)
put_km("kmp.best", km.out)
km.out <- KMeansSparseCluster(x, K = 2, wbounds = 2:7, silent = TRUE)
put_km("kmp.path", km.out)
km.perm.out <- KMeansSparseCluster.permute(x, wbounds = 2:6, centers = x[1:4, ], nperms = 3,
  silent = TRUE)
put_perm("kmp.centers", km.perm.out)

# ---- ?HierarchicalSparseCluster and ?HierarchicalSparseCluster.permute (the same start)
set.seed(1)
x <- matrix(rnorm(100 * 50), ncol = 50)
y <- c(rep(1, 50), rep(2, 50))
x[y == 1, 1:25] <- x[y == 1, 1:25] + 2
save_x("hc", x)
put("hc.y", y)
invisible(capture.output(
  perm.out <- HierarchicalSparseCluster.permute(x, wbounds = c(1.5, 2:6), nperms = 5)
))
put_perm("hc.perm", perm.out)
sparsehc <- HierarchicalSparseCluster(dists = perm.out$dists, wbound = perm.out$bestw,
  method = "complete", silent = TRUE)
put_hc("hc.fit", sparsehc)
sparsehc.comp <- HierarchicalSparseCluster(x, wbound = perm.out$bestw, method = "complete",
  uorth = sparsehc$u, silent = TRUE)
put_hc("hc.comp", sparsehc.comp)
invisible(capture.output(
  perm.out <- HierarchicalSparseCluster.permute(x, wbounds = c(1.5, 2:6), nperms = 5,
    dissimilarity = "absolute.value")
))
put_perm("hc.perm_abs", perm.out)
sparsehc <- HierarchicalSparseCluster(dists = perm.out$dists, wbound = perm.out$bestw,
  method = "complete", dissimilarity = "absolute.value", silent = TRUE)
put_hc("hc.fit_abs", sparsehc)

# ---- ?ColorDendrogram
set.seed(1)
x <- matrix(rnorm(100 * 20), ncol = 20)
y <- c(rep(1, 50), rep(2, 50))
x[y == 1, ] <- x[y == 1, ] + 2
save_x("cd", x)
hc <- hclust(dist(x), method = "complete")
put("cd.merge", hc$merge)
put("cd.height", hc$height)
put("cd.order", hc$order)
png(file.path(outdir, "ColorDendrogram.png"), width = 900, height = 500)
ColorDendrogram(hc, y = y, main = "My Simulated Data", branchlength = 3)
invisible(dev.off())

write.csv(do.call(rbind, vals), file.path(outdir, "values.csv"), row.names = FALSE,
  quote = FALSE)
