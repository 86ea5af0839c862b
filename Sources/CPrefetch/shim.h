// A hint that memory at `p` is read soon, kept in every cache level (the compiler's prefetch
// builtin; Swift has none). The catalog engine's facet counts read the table's rows of a search's
// matches, ascending with gaps the hardware prefetcher does not follow (`FacetTable.counts`), and
// the next count reads the same table. Callers pass addresses inside their buffers only.
static inline void storytime_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
