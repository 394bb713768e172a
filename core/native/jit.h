/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the options of the native backend of compiled models (DESIGN §5a): which C compiler,
 * how long it may run, where the private code cache lives and how much it keeps. The compiler
 * runner and the cache themselves are internal (native/jit_internal.h). */
#ifndef LF_JIT_H
#define LF_JIT_H

#include "base/export.h"

LF_BEGIN_DECLS

/* Objects the cache keeps by default (each a few tens of KB). */
#define LF_JIT_CACHE_MAX 2000

/* Options; a NULL lf_jit_opts pointer or a zero-initialised struct means all defaults. */
typedef struct lf_jit_opts {
    const char *cc;        /* compiler command, split at blanks into argv words (no shell), e.g.
                              "ccache gcc"; NULL: $LIEFLOW_CC if set and non-empty, else the
                              compiler lieflow was built with (LF_BUILD_CC) */
    double timeout;        /* seconds the compiler may run; <= 0: $LIEFLOW_CC_TIMEOUT, else 30 */
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/lieflow if XDG_CACHE_HOME is an absolute path
                              (the XDG spec ignores relative ones), else $HOME/.cache/lieflow
                              (HOME unset or empty: the home directory of the passwd entry) */
    int cache_max;         /* objects the cache keeps (<= 0: LF_JIT_CACHE_MAX); after a compile that
                              leaves more, the least recently used are removed down to 3/4 of it */
    int no_procfs;         /* tests: load through the path and compare dev/inode afterwards, as
                              when /proc is not mounted (the weaker check) */
} lf_jit_opts;

LF_END_DECLS

#endif
