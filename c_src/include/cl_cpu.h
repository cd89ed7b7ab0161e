/*
 * cl_cpu.h -- the one x86 feature test that reads XCR0 as well as CPUID.
 *
 * An AVX2 or AVX-512 implementation may run only when the CPU has the
 * instructions (CPUID) and the operating system saves the registers they use
 * (XCR0, read by xgetbv once CPUID.1:ECX says OSXSAVE).  Implementations that
 * need only the CPUID bit use __builtin_cpu_supports instead.
 */
#ifndef CL_CPU_H
#define CL_CPU_H

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 masks: the state an implementation's registers need saved. */
#define CL_XCR0_YMM 0x06u /* XMM and YMM (AVX, AVX2) */
#define CL_XCR0_ZMM 0xe6u /* XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM (AVX-512) */

/* 1 when CPUID leaf 1 ECX has every bit of leaf1_ecx, leaf 7 (sub-leaf 0) EBX
 * and ECX every bit of leaf7_ebx and leaf7_ecx, and XCR0 every bit of xcr0. */
static inline int cl_x86_has(unsigned leaf1_ecx, unsigned leaf7_ebx, unsigned leaf7_ecx, unsigned xcr0)
{
    unsigned a, b, c, d;
    const unsigned osxsave = 1u << 27;
    if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (leaf1_ecx | osxsave)) != (leaf1_ecx | osxsave))
        return 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & leaf7_ebx) != leaf7_ebx || (c & leaf7_ecx) != leaf7_ecx)
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u)); /* XCR0 */
    (void)hi;
    return (lo & xcr0) == xcr0;
}
#endif

#endif
