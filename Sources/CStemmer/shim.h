// The Snowball project's stemmers from Debian's libstemmer-dev: the same algorithms as
// PostgreSQL's snowball dictionaries (english_stem, french_stem, …).
#include <libstemmer.h>
