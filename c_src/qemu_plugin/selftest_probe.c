/* Probe for selftest.sh: the same marked loop twice (same instruction count). */
#include <stdint.h>

#include "counter.h"

static volatile uint32_t sink;

static void work(void)
{
    uint32_t x = 1;
    for (int i = 0; i < 1000; i++)
        x = x * 1664525u + 1013904223u;
    sink = x;
}

int main(void)
{
    for (int r = 0; r < 2; r++) {
        cl_counter_start();
        work();
        cl_counter_stop();
    }
    return 0;
}
