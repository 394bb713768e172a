/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the export macros of the public headers.
 *
 * lieflow's libraries are built with -fvisibility=hidden: a function is exported only when its
 * declaration sits between LF_BEGIN_DECLS and LF_END_DECLS of a public header (or carries LF_API).
 * Every installed header wraps its declarations so; the headers of method authors and internals
 * (*_internal.h) do not, so their functions stay inside the library (tests/abi_check.sh checks the
 * exported symbols with nm -D). In C++ the same pair is extern "C" { ... }, so a C++ program links
 * the C functions (tests/cxx/client.cpp, built by make test with g++). */
#ifndef LF_EXPORT_H
#define LF_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define LF_API __attribute__((visibility("default")))
#define LF_VISIBILITY_DEFAULT_ _Pragma("GCC visibility push(default)")
#define LF_VISIBILITY_POP_ _Pragma("GCC visibility pop")
#else
#define LF_API
#define LF_VISIBILITY_DEFAULT_
#define LF_VISIBILITY_POP_
#endif

#ifdef __cplusplus
#define LF_BEGIN_DECLS extern "C" { LF_VISIBILITY_DEFAULT_
#define LF_END_DECLS LF_VISIBILITY_POP_ }
#else
#define LF_BEGIN_DECLS LF_VISIBILITY_DEFAULT_
#define LF_END_DECLS LF_VISIBILITY_POP_
#endif

#endif
