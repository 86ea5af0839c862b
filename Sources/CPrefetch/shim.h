// A hint that memory at `p` is read soon (the compiler's prefetch builtin; Swift has none). The
// catalog engine's facet counts read the table's rows of a search's matches, ascending with gaps
// the hardware prefetcher does not follow (`FacetTable.counts`). No fault on any address.
static inline void storytime_prefetch(const void *p) { __builtin_prefetch(p, 0, 0); }
