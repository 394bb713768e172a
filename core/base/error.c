/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message longer than the buffer ends cleanly instead of mid-word (or mid UTF-8 character):
 * at the last line break when that keeps at least half of the buffer (a traceback loses whole
 * lines), else at the last space, followed by "..."; with neither, at a character boundary. */
static void end_cleanly(char *msg, size_t size)
{
    static const char dots[] = "...";
    size_t limit = size - sizeof dots; /* room for "..." and the NUL */
    size_t cut = limit;
    while (cut > 0 && ((unsigned char)msg[cut] & 0xC0) == 0x80) cut--; /* not inside a UTF-8 sequence */
    size_t nl = 0, sp = 0;
    for (size_t i = cut; i > 0; i--) {
        char c = msg[i - 1];
        if (!nl && c == '\n') nl = i - 1;
        if (!sp && (c == ' ' || c == '\t' || c == '\n')) sp = i - 1;
        if (nl && sp) break;
    }
    if (nl >= size / 2) cut = nl + 1; /* keep the line break: "...\n" -> the elided lines */
    else if (sp >= size / 4) cut = sp;
    if (nl >= size / 2) {
        memcpy(msg + cut, dots, sizeof dots); /* whole lines kept, "..." on a line of its own */
    } else {
        while (cut > 0 && msg[cut - 1] == ' ') cut--;
        memcpy(msg + cut, dots, sizeof dots);
    }
}

int lf_error_set(lf_error *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        if (n < 0) snprintf(e->msg, sizeof e->msg, "(error message could not be formatted)");
        else if ((size_t)n >= sizeof e->msg) end_cleanly(e->msg, sizeof e->msg);
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
