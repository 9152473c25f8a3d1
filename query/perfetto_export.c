/* perfetto_export.c — sptd_query_export(): the orchestrator.  It sets up
 * one export's state, reads the window, and calls the writers in the order
 * of the trace (metadata, process tree, tracks, ftrace bundles, track
 * events) or the JSON writer; the writers share perfetto_common.c and
 * never call back here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

static int write_proto(struct sptd_query_pf *pf)
{
	int rc;

	if ((rc = sptd_query_pf_write_clock_snapshot(pf)) < 0 ||
	    (rc = sptd_query_pf_write_system_info(pf)) < 0 ||
	    (rc = sptd_query_pf_write_process_tree(pf)) < 0 ||
	    (rc = sptd_query_pf_write_tracks(pf)) < 0 ||
	    (rc = sptd_query_pf_write_sched(pf)) < 0 ||
	    (rc = sptd_query_pf_write_wakings(pf)) < 0 ||
	    (rc = sptd_query_pf_write_irqs(pf)) < 0 ||
	    (rc = sptd_query_pf_write_ftrace_events(pf)) < 0 ||
	    (rc = sptd_query_pf_write_blocked(pf)) < 0 ||
	    (rc = sptd_query_pf_write_power(pf)) < 0 ||
	    (rc = sptd_query_pf_write_slices(pf)) < 0 ||
	    (rc = sptd_query_pf_write_samples(pf)) < 0 ||
	    (rc = sptd_query_pf_write_profile(pf)) < 0 ||
	    (rc = sptd_query_pf_write_watch_hits(pf)) < 0 ||
	    (rc = sptd_query_pf_write_offcpu(pf)) < 0 ||
	    (rc = sptd_query_pf_write_ptwrites(pf)) < 0 ||
	    (rc = sptd_query_pf_write_gaps(pf)) < 0 ||
	    (rc = sptd_query_pf_write_triggers(pf)) < 0)
		return rc;
	return 0;
}

int sptd_query_export_format_parse(const char *name,
                                   enum sptd_query_export_format *fmt)
{
	if (!name || !fmt)
		return -EINVAL;
	if (!strcmp(name, "proto") || !strcmp(name, "pftrace") ||
	    !strcmp(name, "protobuf") || !strcmp(name, "perfetto")) {
		*fmt = SPTD_QUERY_EXPORT_PROTO;
		return 0;
	}
	if (!strcmp(name, "json")) {
		*fmt = SPTD_QUERY_EXPORT_JSON;
		return 0;
	}
	if (!strcmp(name, "pprof")) {
		*fmt = SPTD_QUERY_EXPORT_PPROF;
		return 0;
	}
	return -EINVAL;
}

int sptd_query_export_opts(struct sptd_store *st, FILE *out,
                           const struct sptd_query_export_options *opts,
                           struct sptd_query_export_stats *stats,
                           char *err, size_t errlen)
{
	struct sptd_query_export_stats local_stats;
	struct sptd_query_export_options defaults;
	struct sptd_query_pf pf;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!opts) {
		memset(&defaults, 0, sizeof(defaults));
		opts = &defaults;
	}
	if (!stats)
		stats = &local_stats;
	memset(stats, 0, sizeof(*stats));
	memset(&pf, 0, sizeof(pf));
	pf.stack_budget = -1;
	pf.err = err;
	pf.errlen = errlen;
	if (!st || !out)
		return sptd_query_pf_fail(&pf, -EINVAL, "export: %s is NULL",
		                          !st ? "the incident" : "the output");
	if (opts->format != SPTD_QUERY_EXPORT_PROTO &&
	    opts->format != SPTD_QUERY_EXPORT_JSON && opts->format != SPTD_QUERY_EXPORT_PPROF)
		return sptd_query_pf_fail(&pf, -EINVAL, "export: unknown format %d",
		                          (int)opts->format);
	pf.st = st;
	pf.out = out;
	pf.stats = stats;
	pf.progress = opts->progress;
	pf.progress_ctx = opts->progress_ctx;
	pf.next_iid = 1;
	sptd_query_pb_init(&pf.pkt);
	sptd_query_pb_init(&pf.interned);
	rc = sptd_query_pf_read_window(&pf);
	if (rc < 0)
		goto out;
	if (opts->format == SPTD_QUERY_EXPORT_JSON)
		rc = sptd_query_pf_write_json(&pf);
	else if (opts->format == SPTD_QUERY_EXPORT_PPROF)
		rc = sptd_query_pf_write_pprof(&pf);
	else
		rc = write_proto(&pf);
	if (rc >= 0 && fflush(out) != 0)
		rc = sptd_query_pf_fail(&pf, -EIO, "writing the trace failed: %s",
		                        strerror(errno));
out:
	sptd_query_pb_fini(&pf.pkt);
	sptd_query_pb_fini(&pf.interned);
	sptd_query_imap_fini(&pf.names);
	sptd_query_imap_fini(&pf.strings);
	sptd_query_imap_fini(&pf.stacks);
	sptd_query_stacks_destroy(pf.chains);
	free(pf.frames);
	return rc < 0 ? rc : 0;
}

int sptd_query_export(struct sptd_store *st, FILE *out,
                      enum sptd_query_export_format fmt,
                      struct sptd_query_export_stats *stats,
                      char *err, size_t errlen)
{
	struct sptd_query_export_options opts;

	memset(&opts, 0, sizeof(opts));
	opts.format = fmt;
	return sptd_query_export_opts(st, out, &opts, stats, err, errlen);
}
