/* perfetto_tracks.c — who is who: the ProcessTree (so Perfetto names the
 * tasks of its sched tracks) and the TrackDescriptors that TrackEvents refer
 * to (a track per thread with slices or samples, under its process; per-CPU
 * gap tracks; the trigger tracks). */
#include <errno.h>
#include <string.h>

#include "perfetto-local.h"

#define TP_TIMESTAMP        8
#define TP_SEQ_ID           10
#define TP_PROCESS_TREE     2
#define TP_TRACK_DESCRIPTOR 60
/* ProcessTree */
#define PT_PROCESSES        1
#define PT_THREADS          2
#define PTP_PID             1
#define PTP_CMDLINE         3
#define PTP_CMDLINE_IS_COMM 9
#define PTT_TID             1
#define PTT_NAME            2
#define PTT_TGID            3
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define TD_UUID             1
#define TD_NAME             2
#define TD_PROCESS          3
#define TD_THREAD           4
#define TD_PARENT           5
#define PD_PID              1
#define PD_NAME             6
#define THD_PID             1
#define THD_TID             2
#define THD_NAME            5

/* Entries per ProcessTree packet. */
#define TREE_CHUNK 1000

static void tree_packet_open(struct sptd_query_pf *pf)
{
	sptd_query_pb_uint(&pf->pkt, TP_TIMESTAMP,
	                   (uint64_t)(pf->window_start < 0 ? 0 : pf->window_start));
	sptd_query_pb_uint(&pf->pkt, TP_SEQ_ID, SPTD_PF_SEQ_META);
	sptd_query_pb_begin(&pf->pkt, TP_PROCESS_TREE);
}

/* argv from a stored cmdline: NUL- or space-separated words.  Without
 * one (a kernel thread, or a process gone before the capture) the comm
 * stands in, said so (cmdline_is_comm).  trace_processor cuts a lone
 * argv[0] at its first blank (processes that rewrite their cmdline with
 * spaces), which turned the NVIDIA driver's kernel thread "UVM global
 * queu" into "UVM": a comm with a blank goes out as argv[0] plus an empty
 * argument, so that the name stays whole. */
static void put_cmdline(struct sptd_query_pb *pb, const char *cmdline,
                        const char *name)
{
	const char *p = cmdline, *word;

	if (!cmdline || !cmdline[0]) {
		sptd_query_pb_string(pb, PTP_CMDLINE, name ? name : "");
		if (name && strchr(name, ' '))
			sptd_query_pb_string(pb, PTP_CMDLINE, "");
		sptd_query_pb_uint(pb, PTP_CMDLINE_IS_COMM, 1);
		return;
	}
	while (*p) {
		while (*p == ' ')
			p++;
		word = p;
		while (*p && *p != ' ')
			p++;
		if (p > word)
			sptd_query_pb_text(pb, PTP_CMDLINE, word, (size_t)(p - word));
	}
}

/* One ProcessTree.processes entry from a row of the process query. */
static void put_process(struct sptd_query_pf *pf, struct sptd_store_stmt *stmt)
{
	struct sptd_query_pb *pb = &pf->pkt;

	sptd_query_pb_begin(pb, PT_PROCESSES);
	sptd_query_pb_int(pb, PTP_PID, sptd_store_column_int(stmt, 0));
	put_cmdline(pb, sptd_store_column_text(stmt, 2), sptd_store_column_text(stmt, 1));
	sptd_query_pb_end(pb);
	pf->stats->processes++;
}

/* One ProcessTree.threads entry from a row of the thread query. */
static void put_thread(struct sptd_query_pf *pf, struct sptd_store_stmt *stmt)
{
	struct sptd_query_pb *pb = &pf->pkt;

	sptd_query_pb_begin(pb, PT_THREADS);
	sptd_query_pb_int(pb, PTT_TID, sptd_store_column_int(stmt, 0));
	if (sptd_store_column_text(stmt, 2))
		sptd_query_pb_string(pb, PTT_NAME, sptd_store_column_text(stmt, 2));
	if (sptd_store_column_type(stmt, 1) != SPTD_STORE_NULL)
		sptd_query_pb_int(pb, PTT_TGID, sptd_store_column_int(stmt, 1));
	sptd_query_pb_end(pb);
	pf->stats->threads++;
}

/* Every row of @sql (on @table) as an entry made by @put, in ProcessTree
 * packets of TREE_CHUNK entries; *@n entries are in the packet still open
 * (0: none open).  0 or -errno. */
static int tree_rows(struct sptd_query_pf *pf, const char *table, const char *sql,
                     void (*put)(struct sptd_query_pf *, struct sptd_store_stmt *), int *n)
{
	struct sptd_store_stmt *stmt = NULL;
	int rc;

	rc = sptd_query_pf_prepare(pf, table, sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		if (*n == 0)
			tree_packet_open(pf);
		put(pf, stmt);
		if (++*n == TREE_CHUNK) {
			sptd_query_pb_end(&pf->pkt);
			if ((rc = sptd_query_pf_flush(pf)) < 0)
				goto out;
			*n = 0;
		}
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, table, rc);
out:
	sptd_store_finalize(stmt);
	return rc < 0 ? rc : 0;
}

int sptd_query_pf_write_process_tree(struct sptd_query_pf *pf)
{
	int rc, n = 0;

	rc = tree_rows(pf, "process", "SELECT pid, name, cmdline FROM process ORDER BY upid",
	               put_process, &n);
	if (rc < 0)
		return rc;
	rc = tree_rows(pf, "thread",
	               "SELECT t.tid, p.pid, t.name FROM thread t "
	               "LEFT JOIN process p ON p.upid = t.upid ORDER BY t.utid",
	               put_thread, &n);
	if (rc < 0)
		return rc;
	if (n > 0) {
		sptd_query_pb_end(&pf->pkt);
		rc = sptd_query_pf_flush(pf);
	}
	return rc;
}

/* One TrackDescriptor with a plain name (gaps, triggers, unknown threads). */
static int named_track(struct sptd_query_pf *pf, uint64_t uuid, const char *name)
{
	sptd_query_pf_track_packet(pf, pf->window_start);
	sptd_query_pb_begin(&pf->pkt, TP_TRACK_DESCRIPTOR);
	sptd_query_pb_uint(&pf->pkt, TD_UUID, uuid);
	sptd_query_pb_string(&pf->pkt, TD_NAME, name);
	sptd_query_pb_end(&pf->pkt);
	return sptd_query_pf_flush(pf);
}

/* A track's uuid keeps 56 bits of its id (SPTD_PF_UUID; a CPU's track
 * id is cpu + 1): an id beyond them would share another's track, and
 * Perfetto would show one thread's calls under another's name.  -1 is
 * valid (no thread, no CPU).  0, or -EBADMSG naming it. */
static int id_check(struct sptd_query_pf *pf, const char *what, int64_t id)
{
	if (id >= -1 && id < (int64_t)0xffffffffffffffLL)
		return 0;
	return sptd_query_pf_fail(pf, -EBADMSG, "%s %lld is out of range (-1 to 2^56 - 2): "
	                          "the file was damaged or written by something else",
	                          what, (long long)id);
}

static int process_tracks(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT DISTINCT p.upid, p.pid, p.name FROM process p JOIN thread t ON t.upid = p.upid "
		"WHERE t.utid IN (SELECT utid FROM slice UNION SELECT utid FROM sample UNION "
		"SELECT utid FROM thread_state WHERE callsite_id IS NOT NULL UNION "
		"SELECT utid FROM ptwrite WHERE utid IS NOT NULL) "
		"ORDER BY p.upid";
	struct sptd_store_stmt *stmt = NULL;
	struct sptd_query_pb *pb = &pf->pkt;
	int rc;

	rc = sptd_query_pf_prepare(pf, "process", sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		if ((rc = id_check(pf, "process upid", sptd_store_column_int(stmt, 0))) < 0)
			goto out;
		sptd_query_pf_track_packet(pf, pf->window_start);
		sptd_query_pb_begin(pb, TP_TRACK_DESCRIPTOR);
		sptd_query_pb_uint(pb, TD_UUID, SPTD_PF_UUID(SPTD_PF_TRACK_PROCESS,
		                                             sptd_store_column_int(stmt, 0)));
		sptd_query_pb_begin(pb, TD_PROCESS);
		sptd_query_pb_int(pb, PD_PID, sptd_store_column_int(stmt, 1));
		if (sptd_store_column_text(stmt, 2))
			sptd_query_pb_string(pb, PD_NAME, sptd_store_column_text(stmt, 2));
		sptd_query_pb_end(pb);
		sptd_query_pb_end(pb);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "process", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

static int thread_tracks(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT x.utid, t.utid IS NOT NULL, t.tid, p.pid, t.name, p.upid "
		"FROM (SELECT utid FROM slice UNION SELECT utid FROM sample UNION "
		"SELECT utid FROM thread_state WHERE callsite_id IS NOT NULL UNION "
		"SELECT utid FROM ptwrite WHERE utid IS NOT NULL) x "
		"LEFT JOIN thread t ON t.utid = x.utid LEFT JOIN process p ON p.upid = t.upid";
	struct sptd_store_stmt *stmt = NULL;
	struct sptd_query_pb *pb = &pf->pkt;
	char name[96];
	int rc;

	rc = sptd_query_pf_prepare(pf, "thread", sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t utid = sptd_store_column_int(stmt, 0);

		if (sptd_store_column_type(stmt, 0) == SPTD_STORE_NULL) {
			rc = named_track(pf, SPTD_PF_UUID(SPTD_PF_TRACK_NOTHREAD, 0),
			                 "sysptd unknown thread");
		} else if ((rc = id_check(pf, "thread utid", utid)) < 0) {
			goto out;
		} else if (!sptd_store_column_int(stmt, 1)) {
			snprintf(name, sizeof(name), "sysptd utid %lld (no thread row)",
			         (long long)utid);
			rc = named_track(pf, SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, utid), name);
		} else {
			int64_t tid = sptd_store_column_int(stmt, 2);
			int has_proc = sptd_store_column_type(stmt, 3) != SPTD_STORE_NULL;

			sptd_query_pf_track_packet(pf, pf->window_start);
			sptd_query_pb_begin(pb, TP_TRACK_DESCRIPTOR);
			sptd_query_pb_uint(pb, TD_UUID, SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, utid));
			if (has_proc)
				sptd_query_pb_uint(pb, TD_PARENT,
				                   SPTD_PF_UUID(SPTD_PF_TRACK_PROCESS,
				                                sptd_store_column_int(stmt, 5)));
			sptd_query_pb_begin(pb, TD_THREAD);
			sptd_query_pb_int(pb, THD_PID, has_proc ? sptd_store_column_int(stmt, 3) : tid);
			sptd_query_pb_int(pb, THD_TID, tid);
			if (sptd_store_column_text(stmt, 4))
				sptd_query_pb_string(pb, THD_NAME, sptd_store_column_text(stmt, 4));
			sptd_query_pb_end(pb);
			sptd_query_pb_end(pb);
			rc = sptd_query_pf_flush(pf);
		}
		if (rc < 0)
			goto out;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "thread", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

/* One track per CPU found in @table (NULL cpu: one for the whole machine). */
static int cpu_tracks(struct sptd_query_pf *pf, const char *table, int kind,
                      const char *what)
{
	struct sptd_store_stmt *stmt = NULL;
	char sql[128], name[64];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT DISTINCT cpu FROM \"%s\" ORDER BY cpu", table);
	rc = sptd_query_pf_prepare(pf, table, sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		if (sptd_store_column_type(stmt, 0) == SPTD_STORE_NULL) {
			if (kind == SPTD_PF_TRACK_TRIGGER)
				continue; /* the global trigger track is written anyway */
			rc = named_track(pf, SPTD_PF_UUID(kind, 0), what);
		} else {
			int64_t cpu = sptd_store_column_int(stmt, 0);

			snprintf(name, sizeof(name), "%s cpu", table);
			if ((rc = id_check(pf, name, cpu)) < 0)
				goto out;
			snprintf(name, sizeof(name), "%s cpu %lld", what, (long long)cpu);
			rc = named_track(pf, SPTD_PF_UUID(kind, (uint64_t)cpu + 1), name);
		}
		if (rc < 0)
			goto out;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, table, rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

int sptd_query_pf_write_tracks(struct sptd_query_pf *pf)
{
	int rc;

	if ((rc = process_tracks(pf)) < 0 || (rc = thread_tracks(pf)) < 0 ||
	    (rc = cpu_tracks(pf, "gap", SPTD_PF_TRACK_GAP, "sysptd gaps")) < 0)
		return rc;
	if (sptd_query_pf_count(pf, "trigger") == 0)
		return 0;
	if ((rc = named_track(pf, SPTD_PF_UUID(SPTD_PF_TRACK_TRIGGER, 0),
	                      "sysptd trigger")) < 0)
		return rc;
	return cpu_tracks(pf, "trigger", SPTD_PF_TRACK_TRIGGER, "sysptd trigger");
}
