#' US State of the Union addresses as a document-term matrix
#'
#' Word counts of all 240 US presidential State of the Union addresses
#' (spoken and written annual messages to Congress) from George Washington's
#' first address in 1790 to Donald Trump's address in 2020, one document per
#' address. The matrix is meant as a ready-made, offline example corpus for
#' topic models such as the aspect model (pLSA): its topics follow the
#' eras of US history (tariffs and banks, slavery and Mexico, Soviet Union
#' and communism, budgets and jobs, ...).
#'
#' The text was lower-cased and split on everything that is not a letter
#' (apostrophes removed, possessive "'s" dropped); numbers, tokens shorter than
#' three letters, the Snowball English stop words and a few corpus-specific
#' filler words (e.g. "will", "upon", month names, "applause") were removed.
#' Only terms occurring in at least 15 addresses and in at most half of the
#' addresses were kept, which removes both rare words and ubiquitous ones such
#' as "congress", "government" or "states". No stemming was applied.
#'
#' @format A sparse `Matrix::dgCMatrix` with 240 rows (documents) and 5173
#'   columns (terms), holding 404526 word occurrences in 221563 non-zero cells.
#'   Entries are whole-number counts stored as doubles. Row names are
#'   document ids of the form `"Surname-Year"` (e.g. `"Washington-1790"`;
#'   a second address by the same president in the same year gets a `"b"`
#'   suffix, e.g. `"Washington-1790b"`, `"Carter-1978b"`); they match
#'   `sotu_meta$doc_id`. Column names are the terms.
#'
#' @source Texts from the CRAN package \pkg{sotu} (version 1.0.4, object
#'   `sotu_text`), which took them from The American Presidency Project,
#'   University of California, Santa Barbara,
#'   <https://www.presidency.ucsb.edu/>. The addresses are works of the US
#'   federal government and are in the public domain.
#'
#' @seealso [sotu_meta] for the document metadata.
#'
#' @examples
#' dim(sotu_dtm)
#' head(rownames(sotu_dtm))
#' head(sort(Matrix::colSums(sotu_dtm), decreasing = TRUE))
#' # documents per party
#' table(sotu_meta$party)
"sotu_dtm"

#' Metadata for the State of the Union document-term matrix
#'
#' One row per address of [sotu_dtm], in the same order as its rows.
#'
#' @format A data frame with 240 rows and 6 columns:
#' \describe{
#'   \item{doc_id}{Document id, identical to `rownames(sotu_dtm)`.}
#'   \item{president}{Name of the president, e.g. `"George Washington"`.}
#'   \item{year}{Year of the address (integer).}
#'   \item{years_active}{Term of office during which the address was given,
#'     e.g. `"1789-1793"`.}
#'   \item{party}{Party of the president (`"Democratic"`, `"Republican"`,
#'     `"Whig"`, `"Democratic-Republican"`, `"Federalist"`,
#'     `"Nonpartisan"`).}
#'   \item{type}{Whether the address was delivered as a `"speech"` or sent
#'     as a `"written"` message.}
#' }
#'
#' @source CRAN package \pkg{sotu} (version 1.0.4, object `sotu_meta`),
#'   based on The American Presidency Project, University of California,
#'   Santa Barbara, <https://www.presidency.ucsb.edu/>. The addresses are works
#'   of the US federal government and are in the public domain.
#'
#' @seealso [sotu_dtm] for the word counts.
#'
#' @examples
#' head(sotu_meta)
#' stopifnot(identical(sotu_meta$doc_id, rownames(sotu_dtm)))
#' table(sotu_meta$type)
"sotu_meta"
