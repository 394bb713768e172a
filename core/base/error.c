#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int lf_error_set(lf_error *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

const char *lf_status_name(int code)
{
    switch (code) {
    case LF_OK: return "LF_OK";
    case LF_ENOCONV: return "LF_ENOCONV";
    case LF_EDOMAIN: return "LF_EDOMAIN";
    case LF_EINVAL: return "LF_EINVAL";
    case LF_ENOMEM: return "LF_ENOMEM";
    case LF_ECALLBACK: return "LF_ECALLBACK";
    case LF_EINTR: return "LF_EINTR";
    default: return "LF_E?";
    }
}
