/* fakepmu_cut.h — what a capture of a generator output (fakepmu_gen.h)
 * can still show after the fake lost data: each AUX ring keeps the last
 * bytes of its stream, a TRUNCATED record loses the first ones.  Where a
 * CPU's data was lost it starts again at its first PSB left (the cut); the
 * truth (truth_compare.h) is then trimmed to what a decode can know.
 * Shared by test_pt_fakegold and test_pt_binary; test code, linked with
 * libipt, fakepmu_gen.c and truth_compare.c. */
#ifndef SPTD_FAKEPMU_CUT_H
#define SPTD_FAKEPMU_CUT_H

#include <stddef.h>
#include <stdint.h>

#include "fakepmu_gen.h"

struct frames;

/* Per CPU what its ring kept and where its data starts again. */
struct fakepmu_cuts {
	const unsigned char *ring[FAKEPMU_GEN_MAXCPU]; /* what each AUX ring keeps, oldest first */
	size_t ring_len[FAKEPMU_GEN_MAXCPU];           /* its length */
	int64_t cut_ts[FAKEPMU_GEN_MAXTASK];    /* per task: data start after a loss (0 none) */
	int64_t cut_cpu_ts[FAKEPMU_GEN_MAXCPU]; /* per CPU: the same */
	uint64_t cut_skip[FAKEPMU_GEN_MAXCPU];  /* per CPU: bytes before its first PSB */
};

/* Fill @k's rings for @g: each CPU keeps the last @aux_bytes of its
 * stream, @drop_cpu (-1 none) without its first @drop_len bytes. */
void fakepmu_cuts_rings(struct fakepmu_cuts *k, const struct fakepmu_ptgen *g, int drop_cpu,
                        size_t drop_len, size_t aux_bytes);
/* A loss at the start of @cpu's data: what survived begins at a PSB whose
 * time is the cut; note it for the task running there (printing where).
 * The cut must be clean: that task on its first run, nothing else run on
 * that CPU before.  0, or -1 with the reason in @why. */
int fakepmu_cuts_note(struct fakepmu_cuts *k, const struct fakepmu_ptgen *g, int cpu, char *why,
                      size_t whylen);
/* What the decode can know after the cuts: intervals of a cut task that
 * ended before the cut (+ @tol) are gone from @truth and @dec; those open
 * across it start at the cut, INFERRED|START_TRUNCATED; @truth re-sorted.
 * How many were so truncated. */
int fakepmu_cuts_apply(const struct fakepmu_cuts *k, const struct fakepmu_ptgen *g,
                       struct frames *truth, struct frames *dec, int64_t tol);
/* The gap rows of the incident @path (times @offset_ns ahead of the
 * generator's) say where the fake lost data, and only there: per CPU of
 * @ncpus one "pt aux data truncated" gap on @drop_cpu alone, no PT decode
 * error, and on a CPU with a cut one "bytes before the first PSB" gap at
 * the cut (within @tol).  How many of those checks failed (each printed to
 * stderr), or -errno when the incident cannot be opened. */
int fakepmu_cuts_check_gaps(const struct fakepmu_cuts *k, int ncpus, int drop_cpu,
                            const char *path, int64_t offset_ns, int64_t tol);

#endif
