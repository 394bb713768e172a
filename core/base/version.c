/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — lf_version(): the library's version (VERSION, through the generated lieflow_version.h). */
#include "base/version.h"

const char *lf_version(void) { return LIEFLOW_VERSION; }
