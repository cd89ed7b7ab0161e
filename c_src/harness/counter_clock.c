/*
 * counter_clock.c -- portable fallback: clock_gettime(CLOCK_MONOTONIC) in
 * nanoseconds, for architectures without a user-readable cycle counter (and
 * for emulated targets, where a guest cycle counter would be meaningless).
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "counter.h"

const char *cl_counter_name(void) { return "clock-monotonic"; }
const char *cl_counter_unit(void) { return "ns"; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cl_counter_start(void) { return now_ns(); }
uint64_t cl_counter_stop(void) { return now_ns(); }
