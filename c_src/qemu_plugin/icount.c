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

static void on_begin(unsigned int vcpu, void *udata)
{
    (void)vcpu, (void)udata;
    if (region_open)
        reopened_begins++;
    opened_at = executed;
    region_open = 1;
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
        deltas = p, cap_deltas = cap;
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
        fprintf(f, "%" PRIu64 "\n", deltas[i]);
    if (f != stderr)
        fclose(f);
    if (unmatched_ends || reopened_begins || region_open)
        fprintf(stderr, "icount: unbalanced markers: %" PRIu64 " end(s) without begin, %" PRIu64
                " begin(s) without end%s\n", unmatched_ends, reopened_begins,
                region_open ? ", region still open at exit" : "");
    free(deltas);
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
        else
            seen_begin = -1;
        if (seen_begin < 0 || seen_end < 0) {
            fprintf(stderr, "icount: bad argument '%s' (use begin=0xADDR,end=0xADDR,out=FILE)\n", argv[i]);
            return 1;
        }
    }
    if (seen_begin != seen_end || (seen_begin && begin_vaddr == end_vaddr)) {
        fprintf(stderr, "icount: give both begin= and end=, at different addresses\n");
        return 1;
    }
    have_markers = seen_begin;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, write_counts, NULL);
    return 0;
}
