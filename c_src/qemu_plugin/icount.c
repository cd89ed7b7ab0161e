/*
 * icount.c -- a QEMU TCG plugin that counts executed guest instructions
 * between two marker functions, for deterministic "cycle" counts on
 * emulated targets (and on the host through qemu-x86_64).
 *
 *   qemu-ARCH -plugin libicount.so,begin=0xADDR,end=0xADDR,out=FILE PROGRAM ...
 *
 * begin/end are the entry addresses of cl_marker_begin/cl_marker_end
 * (c_src/harness/counter_marker.c), which the lab reads from the static
 * binary's ELF symbol table.  Every executed guest instruction adds one to a
 * counter through an inline TCG op (no helper call per instruction); the
 * first instruction of each marker also gets a callback that records the
 * counter.  Each end marker closes the region its begin marker opened, and at
 * exit FILE receives one line per begin/end pair: the number of guest
 * instructions executed from the begin marker to the end marker.  Both marker
 * entries are counted the same way, so the difference does not depend on
 * whether the inline op of an instruction runs before or after its callback.
 * Without begin/end the file gets one line: all instructions of the run.
 *
 * mode=ct (constant-time check, lab/ct.py) adds, per region, a running hash of
 * every executed instruction address (control flow) and one of every memory
 * access (address, size, load or store); each line of FILE is then
 *   INSNS CONTROL_HASH MEMORY_HASH ACCESSES   (hashes in hex)
 * and each trace=N (N: a region's index from 0, in order of begin markers; the
 * argument may repeat) writes region N's whole event stream to FILE.traceN:
 * 16-byte records (uint64 address, uint64 tag; host byte order), tag 0 for an
 * executed instruction, 1 for a load and 2 for a store, with log2 of the
 * access size in bits 8-15.  Those need a callback per instruction and per
 * access, far slower than the inline count, so only mode=ct registers them.
 *
 * Guest instructions are a property of the program and its input, not of the
 * host, so the counts repeat exactly from run to run.  A single guest thread
 * is assumed (the cycles program has one); inline ops are not atomic.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t executed;           /* guest instructions so far (inline op) */
static uint64_t begin_vaddr, end_vaddr;
static int have_markers;
static const char *out_path;

static uint64_t opened_at;          /* counter value at the open begin marker */
static int region_open;
static uint64_t *deltas;
static size_t n_deltas, cap_deltas;
static uint64_t unmatched_ends, reopened_begins;

/* mode=ct */
static int ct_mode;
static uint64_t ctrl_hash, mem_hash, accesses;      /* of the open region */
typedef struct { uint64_t ctrl, mem, accesses; } region_hashes;
static region_hashes *hashes;                       /* one per closed region, beside deltas */
#define MAX_TRACED 8
static uint64_t traced[MAX_TRACED];
static size_t n_traced;
static uint64_t regions_opened;                     /* index of the next region */
static FILE *trace_file;                            /* the open region's trace, when traced */

/* One step of the running hashes: rotation moves high bits down, so no input bit stays confined. */
static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h = (h << 27) | (h >> 37);
    return h * 0x9E3779B97F4A7C15ull;
}

static void trace_record(uint64_t address, uint64_t tag)
{
    uint64_t rec[2] = {address, tag};
    if (fwrite(rec, sizeof rec, 1, trace_file) != 1) {
        fprintf(stderr, "icount: cannot write the trace\n");
        abort();
    }
}

static void on_begin(unsigned int vcpu, void *udata)
{
    (void)vcpu, (void)udata;
    if (region_open)
        reopened_begins++;
    opened_at = executed;
    region_open = 1;
    if (!ct_mode)
        return;
    ctrl_hash = mem_hash = accesses = 0;
    if (trace_file)
        fclose(trace_file), trace_file = NULL;
    for (size_t i = 0; i < n_traced; i++)
        if (traced[i] == regions_opened) {
            char path[4096];
            snprintf(path, sizeof path, "%s.trace%" PRIu64, out_path, regions_opened);
            if (!(trace_file = fopen(path, "wb"))) {
                fprintf(stderr, "icount: cannot write %s\n", path);
                abort();
            }
        }
    regions_opened++;
}

static void on_insn(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    if (!region_open)
        return;
    uint64_t va = (uint64_t)(uintptr_t)udata;
    ctrl_hash = mix(ctrl_hash, va);
    if (trace_file)
        trace_record(va, 0);
}

static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)vcpu, (void)udata;
    if (!region_open)
        return;
    uint64_t tag = (qemu_plugin_mem_is_store(info) ? 2u : 1u) | (uint64_t)qemu_plugin_mem_size_shift(info) << 8;
    mem_hash = mix(mix(mem_hash, vaddr), tag);
    accesses++;
    if (trace_file)
        trace_record(vaddr, tag);
}

static void on_end(unsigned int vcpu, void *udata)
{
    (void)vcpu, (void)udata;
    if (!region_open) {
        unmatched_ends++;
        return;
    }
    region_open = 0;
    if (n_deltas == cap_deltas) {
        size_t cap = cap_deltas ? 2 * cap_deltas : 4096;
        uint64_t *p = realloc(deltas, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "icount: out of memory after %zu regions\n", n_deltas);
            abort();
        }
        region_hashes *h = ct_mode ? realloc(hashes, cap * sizeof *h) : NULL;
        if (ct_mode && !h) {
            fprintf(stderr, "icount: out of memory after %zu regions\n", n_deltas);
            abort();
        }
        deltas = p, hashes = h, cap_deltas = cap;
    }
    if (ct_mode) {
        hashes[n_deltas] = (region_hashes){ctrl_hash, mem_hash, accesses};
        if (trace_file)
            fclose(trace_file), trace_file = NULL;
    }
    deltas[n_deltas++] = executed - opened_at;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
        if (!have_markers)
            continue;
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        if (ct_mode) {  /* before the marker callbacks: a region's first event is its begin marker's entry */
            void *udata = (void *)(uintptr_t)va;
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, QEMU_PLUGIN_CB_NO_REGS, udata);
            qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, udata);
        }
        if (va == begin_vaddr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
        else if (va == end_vaddr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void write_counts(qemu_plugin_id_t id, void *udata)
{
    (void)id, (void)udata;
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    if (!f) {
        fprintf(stderr, "icount: cannot write %s\n", out_path);
        return;
    }
    if (!have_markers)              /* no markers: the whole run is the region */
        fprintf(f, "%" PRIu64 "\n", executed);
    for (size_t i = 0; i < n_deltas; i++)
        if (ct_mode)
            fprintf(f, "%" PRIu64 " %016" PRIx64 " %016" PRIx64 " %" PRIu64 "\n", deltas[i], hashes[i].ctrl,
                    hashes[i].mem, hashes[i].accesses);
        else
            fprintf(f, "%" PRIu64 "\n", deltas[i]);
    if (f != stderr)
        fclose(f);
    if (unmatched_ends || reopened_begins || region_open)
        fprintf(stderr, "icount: unbalanced markers: %" PRIu64 " end(s) without begin, %" PRIu64
                " begin(s) without end%s\n", unmatched_ends, reopened_begins,
                region_open ? ", region still open at exit" : "");
    free(deltas);
    free(hashes);
    if (trace_file)
        fclose(trace_file);
}

static int parse_address(const char *arg, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    if (strncmp(arg, key, k) != 0 || arg[k] != '=')
        return 0;
    char *end;
    *out = strtoull(arg + k + 1, &end, 0);
    return *end == '\0' && end != arg + k + 1 ? 1 : -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    int seen_begin = 0, seen_end = 0;
    for (int i = 0; i < argc; i++) {
        int r;
        if ((r = parse_address(argv[i], "begin", &begin_vaddr)) != 0)
            seen_begin = r;
        else if ((r = parse_address(argv[i], "end", &end_vaddr)) != 0)
            seen_end = r;
        else if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4])
            out_path = argv[i] + 4;
        else if (strcmp(argv[i], "mode=ct") == 0)
            ct_mode = 1;
        else if (strcmp(argv[i], "mode=count") == 0)
            ct_mode = 0;
        else if (strncmp(argv[i], "trace=", 6) == 0 && n_traced < MAX_TRACED) {
            char *end;
            traced[n_traced++] = strtoull(argv[i] + 6, &end, 10);
            if (*end || end == argv[i] + 6)
                seen_begin = -1;
        } else
            seen_begin = -1;
        if (seen_begin < 0 || seen_end < 0) {
            fprintf(stderr, "icount: bad argument '%s' (use begin=0xADDR,end=0xADDR,out=FILE[,mode=ct][,trace=N])\n",
                    argv[i]);
            return 1;
        }
    }
    if (seen_begin != seen_end || (seen_begin && begin_vaddr == end_vaddr)) {
        fprintf(stderr, "icount: give both begin= and end=, at different addresses\n");
        return 1;
    }
    if (ct_mode && (!seen_begin || !out_path)) {
        fprintf(stderr, "icount: mode=ct needs begin=, end= and out=\n");
        return 1;
    }
    if (n_traced && !ct_mode) {
        fprintf(stderr, "icount: trace= needs mode=ct\n");
        return 1;
    }
    have_markers = seen_begin;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, write_counts, NULL);
    return 0;
}
