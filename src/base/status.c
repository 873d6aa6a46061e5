#include "status.h"

#include <string.h>

/* The largest errno value: Linux's MAX_ERRNO. */
#define ERRNO_MAX 4095

const char *sp_strerror(sp_status status)
{
    if (status > 0)
        return strerror(status);
    if (status < 0 && status >= -ERRNO_MAX)  /* negated: the API's */
        return strerror(-status);
    switch (status) {
    case SP_OK:            return "success";
    case SP_E_USAGE:       return "invalid argument";
    case SP_E_EMPTY:       return "empty file";
    case SP_E_NOTPNM:      return "not a format scaleppm reads";
    case SP_E_UNSUPPORTED: return "unsupported format";
    case SP_E_BADHEADER:   return "bad PNM header";
    case SP_E_TOOBIG:      return "image too large";
    case SP_E_TRUNCATED:   return "file is truncated";
    case SP_E_BADRASTER:   return "bad pixel data";
    case SP_E_OUTFORMAT:   return "unsupported output format";
    case SP_E_ENCODE:      return "image encoder failed";
    case SP_E_THREAD:      return "cannot run worker threads";
    case SP_E_CHANGED:     return "input changed while reading";
    case SP_E_LIMIT:       return "image too large for --max-pixels";
    case SP_E_REFUSED:     return "refused";
    case SP_E_CONVERT:     return "cannot write this type from the input";
    case SP_E_BADJPEG:     return "bad JPEG header";
    case SP_E_BADPNG:      return "bad PNG header";
    }
    return "unknown error";
}
