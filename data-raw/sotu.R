# data-raw/sotu.R -- builds data/sotu_dtm.rda and data/sotu_meta.rda (one
# object each, so that data(sotu_dtm) and data(sotu_meta) find them)
#
# Source:  US presidential State of the Union addresses, 1790-2020, as
#          distributed in the CRAN package 'sotu' (v1.0.4; objects `sotu_text`
#          and `sotu_meta`), which took the texts from The American Presidency
#          Project, UC Santa Barbara (https://www.presidency.ucsb.edu/).
# License: The addresses are works of the US federal government (official
#          messages of the President to Congress) and are therefore in the
#          public domain in the United States (17 U.S.C. 105). The 'sotu'
#          package itself is GPL-2; only the (public-domain) text is used
#          here, reduced to word counts. The stop-word list embedded below is
#          the Snowball English list (as shipped by tm::stopwords("en"),
#          BSD-licensed) plus a few corpus-specific additions.
#
# Re-run (from the package root):
#   install.packages(c("sotu", "Matrix"))
#   Rscript data-raw/sotu.R
#
# Processing (base R + Matrix only, no NLP packages):
#   * one document per address (240 documents);
#   * remove stage directions such as "[Laughter]" / "[Applause]";
#   * lower-case, normalise apostrophes, drop possessive "'s", split on
#     anything that is not a letter or an apostrophe, then drop apostrophes
#     (so "don't" -> "dont"); digits never form tokens, so numbers vanish;
#   * drop stop words and tokens shorter than 3 letters;
#   * keep terms occurring in at least `min_df` documents and in at most
#     `max_df_prop` of the documents (removes both typos/rare names and
#     ubiquitous words such as "congress", "government", "states");
#   * no stemming.
# Row names are "<Surname>-<year>"; when a president has two addresses in
# one year (e.g. a spoken and a written message) the second gets a "b".

stopifnot(requireNamespace("sotu", quietly = TRUE),
          requireNamespace("Matrix", quietly = TRUE))

min_df      <- 15    # minimum number of documents a term must occur in
max_df_prop <- 0.5   # maximum proportion of documents a term may occur in

text <- sotu::sotu_text
meta <- sotu::sotu_meta
stopifnot(length(text) == nrow(meta))

# ---- stop words --------------------------------------------------------------
stop_en <- c("i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you",
  "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself",
  "she", "her", "hers", "herself", "it", "its", "itself", "they", "them",
  "their", "theirs", "themselves", "what", "which", "who", "whom", "this",
  "that", "these", "those", "am", "is", "are", "was", "were", "be", "been",
  "being", "have", "has", "had", "having", "do", "does", "did", "doing",
  "would", "should", "could", "ought", "i'm", "you're", "he's", "she's",
  "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd",
  "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll",
  "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't",
  "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't",
  "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't",
  "let's", "that's", "who's", "what's", "here's", "there's", "when's",
  "where's", "why's", "how's", "a", "an", "the", "and", "but", "if", "or",
  "because", "as", "until", "while", "of", "at", "by", "for", "with", "about",
  "against", "between", "into", "through", "during", "before", "after",
  "above", "below", "to", "from", "up", "down", "in", "out", "on", "off",
  "over", "under", "again", "further", "then", "once", "here", "there",
  "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
  "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same",
  "so", "than", "too", "very")
# corpus-specific additions: modal/filler words, speech furniture, months
stop_extra <- c("will", "can", "shall", "may", "might", "must", "also", "upon",
  "yet", "still", "even", "just", "ever", "every", "much", "many", "well",
  "now", "one", "two", "three", "four", "five", "six", "seven", "eight",
  "nine", "ten", "first", "second", "third", "last", "let", "get", "got",
  "thus", "however", "therefore", "whether", "within", "without", "among",
  "already", "though", "although", "since", "whose", "wherever", "hereafter",
  "herein", "thereof", "therein", "thereby", "hence", "whereas", "said",
  "say", "says", "per", "cent", "etc", "mr", "mrs", "applause", "laughter",
  "january", "february", "march", "april", "june", "july", "august",
  "september", "october", "november", "december")
stop_words <- unique(c(stop_en, stop_extra))
stop_words <- unique(c(stop_words, gsub("'", "", stop_words, fixed = TRUE)))

# ---- tokenisation ------------------------------------------------------------
tokenize <- function(x) {
  x <- gsub("\\[\\s*(laughter|applause)\\s*\\]", " ", x, ignore.case = TRUE)
  x <- tolower(x)
  x <- gsub("[\u2018\u2019`]", "'", x)            # curly quotes, backticks
  x <- gsub("'s\\b", "", x, perl = TRUE)          # possessive 's
  tok <- strsplit(x, "[^a-z']+")
  lapply(tok, function(t) {
    t <- t[!(t %in% stop_words)]
    t <- gsub("'", "", t, fixed = TRUE)
    t[nchar(t) >= 3L & !(t %in% stop_words)]
  })
}
tokens <- tokenize(text)

# ---- document ids ------------------------------------------------------------
surname <- sub("^.*\\s", "", meta$president)
doc_id  <- paste0(surname, "-", meta$year)
dup     <- duplicated(doc_id)
doc_id[dup] <- paste0(doc_id[dup], "b")
stopifnot(!anyDuplicated(doc_id))

# ---- document-term matrix ----------------------------------------------------
vocab <- sort(unique(unlist(tokens, use.names = FALSE)))
i <- rep.int(seq_along(tokens), lengths(tokens))
j <- match(unlist(tokens, use.names = FALSE), vocab)
dtm <- Matrix::sparseMatrix(i = i, j = j, x = 1,
                            dims = c(length(tokens), length(vocab)),
                            dimnames = list(doc_id, vocab))
dtm <- methods::as(dtm, "CsparseMatrix")          # duplicates are summed

df   <- Matrix::colSums(dtm > 0)
keep <- df >= min_df & df <= max_df_prop * nrow(dtm)
sotu_dtm <- dtm[, keep]
sotu_dtm <- Matrix::drop0(sotu_dtm)
stopifnot(methods::is(sotu_dtm, "dgCMatrix"),
          all(Matrix::rowSums(sotu_dtm) > 0),
          all(Matrix::colSums(sotu_dtm) > 0))

# ---- metadata ----------------------------------------------------------------
sotu_meta <- data.frame(
  doc_id       = doc_id,
  president    = meta$president,
  year         = as.integer(meta$year),
  years_active = meta$years_active,
  party        = meta$party,
  type         = meta$sotu_type,
  stringsAsFactors = FALSE
)
rownames(sotu_meta) <- NULL
stopifnot(identical(sotu_meta$doc_id, rownames(sotu_dtm)))

if (!dir.exists("data")) dir.create("data")
save(sotu_dtm, file = file.path("data", "sotu_dtm.rda"), compress = "xz")
save(sotu_meta, file = file.path("data", "sotu_meta.rda"), compress = "xz")

message(sprintf("sotu_dtm: %d documents x %d terms, %d non-zeros, %g tokens",
                nrow(sotu_dtm), ncol(sotu_dtm), length(sotu_dtm@x),
                sum(sotu_dtm@x)))
