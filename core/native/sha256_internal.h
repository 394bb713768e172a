/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — SHA-256 (FIPS 180-4) of byte strings; the key of the compiled-code cache (jit_internal.h). */
#ifndef LF_SHA256_H
#define LF_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Incremental hashing: init, update with consecutive pieces, final. The digest equals that of the
 * concatenation of all pieces. A context is caller-owned; no state is shared between contexts. */
typedef struct lf_sha256_ctx {
    uint32_t h[8];
    uint64_t nbytes;        /* bytes hashed so far */
    unsigned char buf[64];  /* the partial block */
    size_t nbuf;
} lf_sha256_ctx;

void lf_sha256_init(lf_sha256_ctx *c);
void lf_sha256_update(lf_sha256_ctx *c, const void *data, size_t n);
/* Writes the 32-byte digest; the context must be initialised again before reuse. */
void lf_sha256_final(lf_sha256_ctx *c, unsigned char out[32]);

/* The 32-byte digest of data[0..n). */
void lf_sha256(const void *data, size_t n, unsigned char out[32]);
/* The digest as 64 lower-case hex digits and a terminating NUL. */
void lf_sha256_hex(const void *data, size_t n, char out[65]);
/* A digest as 64 lower-case hex digits and a terminating NUL. */
void lf_sha256_tohex(const unsigned char digest[32], char out[65]);

#endif
