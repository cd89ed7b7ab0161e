/* util.h -- small helpers shared by the harness programs (not by ciphers). */
#ifndef CL_UTIL_H
#define CL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cipherlab.h"

/* Prints a JSON string literal (with quotes) for s. */
void cl_json_str(FILE *f, const char *s);
/* Prints bytes as a quoted lowercase hex string. */
void cl_json_hex(FILE *f, const uint8_t *b, size_t n);
/* Prints {"type":"error",...} and exits with status 2. */
void cl_die(const char *prog, const char *msg, const char *detail);
/* Looks up --impl, checks availability; prints an "unavailable" record and
 * exits 3 when the CPU lacks what the implementation needs. */
const cl_impl *cl_require_impl(const char *prog, const char *name);
/* 64-byte aligned zeroed allocation of a key schedule; aborts on failure. */
void *cl_alloc_aligned(size_t bytes);
/* Deterministic generator (splitmix64) for keys and data. */
uint64_t cl_rand_next(uint64_t *state);
void cl_rand_fill(uint64_t *state, uint8_t *buf, size_t n);
/* Parses "128,192,256" into out (max n entries); returns the count. */
size_t cl_parse_list(const char *s, unsigned long *out, size_t n);
/* Prints the {"type":"impl",...} description of impl (no newline). */
void cl_json_impl_fields(FILE *f, const cl_impl *impl);

#endif
