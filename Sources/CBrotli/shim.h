// Brotli's encoder from Debian's libbrotli-dev (the Google/IETF reference implementation, RFC 7932).
#include <brotli/encode.h>
