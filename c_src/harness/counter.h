/*
 * counter.h -- the cycle counter used by `cycles`.  One back-end file is
 * linked per build (chosen by the lab for the target's architecture, in
 * order of preference): counter_x86_tsc.c, then counter_clock.c.  Every
 * record names the back-end it used, because a TSC tick, a core cycle and a
 * nanosecond are different units.
 */
#ifndef CL_COUNTER_H
#define CL_COUNTER_H

#include <stdint.h>

/* Short machine name of the counter, e.g. "x86-tsc-lfence". */
const char *cl_counter_name(void);
/* Unit of one count: "tsc_ticks", "ns", ... */
const char *cl_counter_unit(void);
/* Reads the counter, serialised so that earlier/later work is not reordered
 * across the read. */
uint64_t cl_counter_start(void);
uint64_t cl_counter_stop(void);

#endif
