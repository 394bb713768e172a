/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — status codes and the error record every fallible C function fills. */
#ifndef LF_ERROR_H
#define LF_ERROR_H

#include "base/export.h"
#include <stddef.h>

LF_BEGIN_DECLS

enum {
    LF_OK = 0,
    LF_ENOCONV = 1,   /* an iteration (Newton, reference solver) did not converge */
    LF_EDOMAIN = 2,   /* argument outside the domain of a map (angle pi for cayinv, ...) */
    LF_EINVAL = 3,    /* invalid argument: non-finite number, non-positive inertia, ... */
    LF_ENOMEM = 4,    /* allocation failed */
    LF_ECALLBACK = 5, /* a user callback (Lua potential) failed or returned garbage */
    LF_EINTR = 6      /* cancelled through the stepper's cancel flag (Ctrl-C in the REPL) */
};

typedef struct lf_error {
    int code;
    char msg[512];
} lf_error;

/* Fill *e (if not NULL) with code and a printf-style message; returns code. A message longer than
 * msg ends cleanly: at a line break when that keeps half of the buffer (a callback's traceback
 * loses whole lines), else at a word, followed by "..."; never inside a word or UTF-8 character.
 * (Measured over the test suite and the examples: 11 of 82 messages are longer, all of them Lua
 * callback errors with their traceback, 285 to 1803 bytes; their first line always fits.) */
int lf_error_set(lf_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short name of a status code ("LF_ENOCONV", ...). */
const char *lf_status_name(int code);

LF_END_DECLS

#endif
