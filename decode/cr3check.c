/* cr3check.c — PIP packets (CR3 writes) as a cross-check of the sched
 * timeline: the first CR3 seen while the timeline runs a process binds it
 * to that process (threads share one); a bound CR3 showing up while the
 * timeline runs another process is a mismatch, reported once per stretch
 * between two switches.  The decode loop (flow.c) turns a mismatch into a
 * count and a gap; decoding keeps following the timeline. */
#include <errno.h>
#include <stdlib.h>

#include "flow-local.h"

int sptd_dec_cr3check_see(struct sptd_dec_cr3check *c, uint64_t cr3, int pid,
                          size_t napplied, int *bound_pid)
{
	size_t i;

	for (i = 0; i < c->n && c->cr3s[i].cr3 != cr3; i++)
		;
	if (i == c->n) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16;
			struct sptd_dec_cr3 *n = realloc(c->cr3s, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			c->cr3s = n;
			c->cap = cap;
		}
		c->cr3s[c->n++] = (struct sptd_dec_cr3){ .cr3 = cr3, .pid = pid };
		return 0;
	}
	if (c->cr3s[i].pid == pid || c->flagged == napplied + 1)
		return 0;
	c->flagged = napplied + 1;
	*bound_pid = c->cr3s[i].pid;
	return 1;
}

void sptd_dec_cr3check_fini(struct sptd_dec_cr3check *c)
{
	if (!c)
		return;
	free(c->cr3s);
	c->cr3s = NULL;
	c->n = c->cap = 0;
	c->flagged = 0;
}
