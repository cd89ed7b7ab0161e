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
/* Frees a key schedule of impl made by cl_alloc_aligned: impl->release first
 * (when set), so a peer library's objects are freed too.  NULL is ignored. */
void cl_free_ks(const cl_impl *impl, void *ks);
/* Deterministic generator (splitmix64) for keys and data. */
uint64_t cl_rand_next(uint64_t *state);
void cl_rand_fill(uint64_t *state, uint8_t *buf, size_t n);
/* Prints the {"type":"impl",...} description of impl (no newline). */
void cl_json_impl_fields(FILE *f, const cl_impl *impl);
/* CLOCK_MONOTONIC in nanoseconds (the timing program's clock, and the
 * wall clock every program uses to size its samples). */
uint64_t cl_now_ns(void);
/* Prints `"name":[v0,v1,...]` (with a leading comma) for n numbers. */
void cl_json_u64_array(FILE *f, const char *name, const uint64_t *v, size_t n);

/* ---- the machine-speed gauge (issue 24) ----
 * A fixed reference workload that `timing` and `cycles` sample once per
 * round beside the cell's own samples, with the same clock or counter, so
 * that it sees the same memory layout, frequency and neighbours as the cell.
 * The lab divides each sample's cost by the gauge sample of the same round
 * (lab/quantities.py).  Change the work and you must change the name:
 * gauges of different workloads are never compared. */
#define CL_GAUGE_WORKLOAD "rotl-xor-table-v1"
/* `iters` dependent steps of table lookups, rotates, xors and adds over a
 * 1 KiB table (the kind of work a table-driven cipher does); returns the
 * final state so that the work cannot be dropped. */
uint32_t cl_gauge_work(unsigned long iters);
/* One gauge sample of `iters` iterations on CLOCK_MONOTONIC, in ns (timing's
 * per-round samples, and the sizing below). */
uint64_t cl_gauge_ns(unsigned long iters);
/* The gauge's iterations per sample: doubled from 64 (to at most max_iters)
 * until a sample lasts target_ns, each size judged by the smaller of two
 * readings (one slow reading must not end the doubling early). */
unsigned long cl_gauge_size(uint64_t target_ns, unsigned long max_iters);
/* Prints the {"type":"gauge",...} record (with newline) of n samples of
 * per_sample iterations each, in `unit`. */
void cl_json_gauge(FILE *f, unsigned long per_sample, const char *unit, const uint64_t *v, size_t n);

/* ---- one option parser for the harness programs ----
 * Each program lists its options in a table ending with {NULL}; every
 * option takes one value except CL_OPT_FLAG.  Unknown options, missing or
 * malformed values end the program with an "error" record (exit 2). */
typedef enum { CL_OPT_STR, CL_OPT_ULONG, CL_OPT_U64, CL_OPT_LIST, CL_OPT_FLAG } cl_opt_kind;
#define CL_LIST_MAX 16
typedef struct {
    unsigned long v[CL_LIST_MAX];
    size_t n;
} cl_list;
typedef struct {
    const char *name; /* e.g. "--impl" */
    cl_opt_kind kind;
    void *dest;       /* const char **, unsigned long *, uint64_t *, cl_list *, int * */
} cl_option;
void cl_parse_options(const char *prog, int argc, char **argv, const cl_option *opts);

#endif
