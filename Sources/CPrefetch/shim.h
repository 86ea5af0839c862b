// A hint that memory at `p` is read soon (the compiler's prefetch builtin; Swift has none). The
// catalog engine's facet counts read the table's rows of a search's matches, ascending with gaps
// the hardware prefetcher does not follow (`FacetTable.counts`). Locality 0 (x86's `prefetchnta`):
// asking for the rows to stay in every cache level made a million books' answers 3–12 % slower
// in the engine profile (docs/performance.md, round 20). Callers pass addresses inside their buffers only.
static inline void storytime_prefetch(const void *p) { __builtin_prefetch(p, 0, 0); }
