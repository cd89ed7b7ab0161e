/*
 * counter_x86_tsc.c -- RDTSC with LFENCE serialisation (x86-64 and i386).
 *
 * NIST surrounded RDTSC with CPUID; in a virtual machine CPUID traps to the
 * hypervisor and costs thousands of noisy cycles, so we use the sequence
 * Intel's benchmarking note recommends instead: LFENCE;RDTSC before,
 * RDTSCP;LFENCE after.  On CPUs with a constant-rate TSC (all current ones)
 * this counts reference ticks at the TSC rate, not core cycles.
 */
#include "counter.h"

#if !(defined(__x86_64__) || defined(__i386__))
#error "counter_x86_tsc.c is for x86 targets only; link counter_clock.c instead"
#endif

const char *cl_counter_name(void) { return "x86-tsc-lfence"; }
const char *cl_counter_unit(void) { return "tsc_ticks"; }

uint64_t cl_counter_start(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

uint64_t cl_counter_stop(void)
{
    uint32_t lo, hi, aux;
    __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    (void)aux;
    return ((uint64_t)hi << 32) | lo;
}
