/* pftrace_reader.h — a minimal, independent protobuf reader for the traces
 * sysptd writes: Trace -> TracePackets -> the fields the exporter emits,
 * decoded into flat arrays a test can compare with the incident's tables.
 * It shares no code with query/ (its own varint/length parsing), so a
 * wire-format mistake in the writer shows up here. */
#ifndef PFTRACE_READER_H
#define PFTRACE_READER_H

#include <stddef.h>
#include <stdint.h>

/* A compact_sched switch, timestamps made absolute. */
struct pft_switch {
	int cpu;
	int64_t ts;
	int64_t prev_state;
	int next_pid, next_prio;
	char comm[64];
};

/* A compact_sched waking. */
struct pft_waking {
	int cpu;          /* bundle CPU (the waker's) */
	int64_t ts;
	int pid, target_cpu;
	char comm[64];
};

/* irq/softirq FtraceEvent. */
enum pft_irq_kind { PFT_IRQ_ENTRY, PFT_IRQ_EXIT, PFT_SOFT_ENTRY, PFT_SOFT_EXIT };
struct pft_irq {
	int cpu;
	int64_t ts;
	enum pft_irq_kind kind;
	int num;          /* irq or vec */
	int ret;
	char name[64];
};

/* TrackDescriptor. */
struct pft_track {
	uint64_t uuid, parent;
	char name[96];
	int has_thread, has_process;
	int pid, tid;
	char thread_name[64];
};

/* TrackEvent with its interned names resolved.  Strings point into the
 * reader's string pool (valid until pft_free); "" when absent. */
struct pft_event {
	uint32_t seq;
	int type;         /* 1 begin, 2 end, 3 instant */
	int64_t ts;
	uint64_t track;
	const char *name;
	const char *symbol, *dso, *kind, *truncated, *detail, *stack;
	int64_t flags, cpu;
	int inferred;
	int name_resolved;/* 0: name_iid had no definition on the sequence */
};

struct pft_thread { int tid, tgid; char name[64]; };
struct pft_process { int pid; char cmdline0[128]; };

struct pftrace {
	struct pft_switch *sw; size_t nsw, capsw;
	struct pft_waking *wk; size_t nwk, capwk;
	struct pft_irq *irq; size_t nirq, capirq;
	struct pft_track *tracks; size_t ntracks, captracks;
	struct pft_event *ev; size_t nev, capev;
	struct pft_thread *threads; size_t nthreads, capthreads;
	struct pft_process *procs; size_t nprocs, capprocs;
	size_t packets;
	int clocks[8]; int64_t clock_ts[8]; int nclocks; int primary_clock;
	char release[128], sysname[32];
	int default_clock;      /* trace_packet_defaults timestamp_clock_id on seq 3 */
	size_t unresolved;      /* interned ids used before/without a definition */
	size_t bad_flags;       /* packets breaking the sequence_flags rules */
	size_t negative_deltas; /* compact_sched deltas that would go backwards */
};

/* Parse @path.  0, or -1 with a reason in @err. */
int pft_read(const char *path, struct pftrace *t, char *err, size_t errlen);
void pft_free(struct pftrace *t);
/* The track with @uuid, or NULL. */
const struct pft_track *pft_track(const struct pftrace *t, uint64_t uuid);


/* Compare a decoded trace with the incident it was exported from (through
 * the store's own SQL, independently of query/): every sched_slice,
 * irq_slice, softirq_slice and slice appears exactly once, begin/end are
 * balanced per track, nesting depth matches slice.depth, interned names
 * resolve, timestamps are monotonic per track and in compact_sched, and
 * samples, gaps and triggers are all there.  Returns the number of
 * failures, each printed to stderr. (tests/lib/pftrace_check.c) */
struct sptd_store;
int pft_check_incident(struct sptd_store *st, const struct pftrace *t);
/* Kernel TASK_REPORT bits of an ftrace state string ("S", "R+"...). */
int64_t pft_state_bits(const char *state);

#endif /* PFTRACE_READER_H */
