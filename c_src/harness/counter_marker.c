/*
 * counter_marker.c -- "qemu-insn-region": deterministic instruction counts
 * for emulated targets (and for the host through qemu-x86_64).
 *
 * The counter itself reads nothing and returns 0, so `cycles` prints deltas
 * of 0.  What counts is that cl_counter_start()/cl_counter_stop() call the
 * two marker functions below: the lab runs the program under qemu-user with
 * the icount TCG plugin (c_src/qemu_plugin), gives it the markers' addresses
 * from the static binary's symbol table, and the plugin reports the guest
 * instructions executed between each begin/end pair.  The lab then puts those
 * counts in place of the zero deltas, in order (lab/icount.py).
 *
 * The markers must survive every optimisation of every toolchain profile:
 * not inlined, not cloned or folded into one another (their bodies differ),
 * externally visible (so they are in the symbol table, also with -flto), and
 * not removable (a volatile store and an asm memory barrier).
 */
#include "counter.h"

#if defined(__clang__)
#define CL_MARKER __attribute__((noinline, used, visibility("default")))
#else
#define CL_MARKER __attribute__((noinline, noipa, used, externally_visible, visibility("default")))
#endif

void cl_marker_begin(void);
void cl_marker_end(void);

/* Written by the markers so that their bodies differ (no identical-code folding). */
volatile unsigned cl_marker_last;

CL_MARKER void cl_marker_begin(void)
{
    cl_marker_last = 1;
    __asm__ __volatile__("" ::: "memory");
}

CL_MARKER void cl_marker_end(void)
{
    __asm__ __volatile__("" ::: "memory");
    cl_marker_last = 2;
}

const char *cl_counter_name(void) { return "qemu-insn-region"; }
const char *cl_counter_unit(void) { return "guest_insns"; }

uint64_t cl_counter_start(void)
{
    cl_marker_begin();
    return 0;
}

uint64_t cl_counter_stop(void)
{
    cl_marker_end();
    return 0;
}
