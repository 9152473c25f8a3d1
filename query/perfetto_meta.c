/* perfetto_meta.c — the incident's metadata as the export needs it: the
 * window and clock read from meta, and the packets that open the trace on
 * SEQ_META (ClockSnapshot, SystemInfo).
 *
 * Field numbers are those of Perfetto's protos (protos/perfetto/trace/...);
 * tests/perfetto/sysptd_trace.proto lists every field written here. */
#include <string.h>

#include "perfetto-local.h"

/* TracePacket */
#define TP_TIMESTAMP        8
#define TP_SEQ_ID           10
#define TP_SEQ_FLAGS        13
#define TP_CLOCK_SNAPSHOT   6
#define TP_SYSTEM_INFO      45
#define TP_FIRST_ON_SEQ     87
#define SEQ_INCREMENTAL_STATE_CLEARED 1
/* ClockSnapshot */
#define CS_CLOCKS           1
#define CS_PRIMARY_CLOCK    2
#define CS_CLOCK_ID         1
#define CS_CLOCK_TS         2
#define CLOCK_MONOTONIC_ID  3
#define CLOCK_BOOTTIME_ID   6
/* SystemInfo / Utsname */
#define SI_UTSNAME          1
#define SI_NUM_CPUS         8
#define UTS_SYSNAME         1
#define UTS_VERSION         2
#define UTS_RELEASE         3
#define UTS_MACHINE         4

/* meta text into @buf, "" when absent. */
static void meta_text(struct sptd_query_pf *pf, const char *key, char *buf, size_t len)
{
	if (sptd_store_meta_get(pf->st, key, buf, len) < 0)
		buf[0] = '\0';
}

int sptd_query_pf_read_window(struct sptd_query_pf *pf)
{
	char clock[32];
	int64_t v;

	pf->window_start = 0;
	pf->window_end = 0;
	if (sptd_store_meta_get_int(pf->st, "window_start", &v) >= 0)
		pf->window_start = v;
	else if (sptd_store_query_int(pf->st,
	                              "SELECT min(t) FROM (SELECT min(ts) AS t FROM sched_slice "
	                              "UNION ALL SELECT min(ts) FROM slice UNION ALL "
	                              "SELECT min(ts) FROM sample UNION ALL SELECT min(ts) FROM irq_slice)",
	                              &v) >= 0)
		pf->window_start = v;
	if (sptd_store_meta_get_int(pf->st, "window_end", &v) >= 0)
		pf->window_end = v;
	meta_text(pf, "clock", clock, sizeof(clock));
	pf->monotonic = strcmp(clock, "monotonic") == 0;
	return 0;
}

int sptd_query_pf_write_clock_snapshot(struct sptd_query_pf *pf)
{
	struct sptd_query_pb *pb = &pf->pkt;
	uint64_t ts = (uint64_t)(pf->window_start < 0 ? 0 : pf->window_start);

	sptd_query_pb_uint(pb, TP_TIMESTAMP, ts);
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_META);
	sptd_query_pb_uint(pb, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	sptd_query_pb_uint(pb, TP_FIRST_ON_SEQ, 1);
	sptd_query_pb_begin(pb, TP_CLOCK_SNAPSHOT);
	sptd_query_pb_begin(pb, CS_CLOCKS);
	sptd_query_pb_uint(pb, CS_CLOCK_ID, CLOCK_BOOTTIME_ID);
	sptd_query_pb_uint(pb, CS_CLOCK_TS, ts);
	sptd_query_pb_end(pb);
	if (pf->monotonic) {
		sptd_query_pb_begin(pb, CS_CLOCKS);
		sptd_query_pb_uint(pb, CS_CLOCK_ID, CLOCK_MONOTONIC_ID);
		sptd_query_pb_uint(pb, CS_CLOCK_TS, ts);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_uint(pb, CS_PRIMARY_CLOCK, CLOCK_BOOTTIME_ID);
	sptd_query_pb_end(pb);
	return sptd_query_pf_flush(pf);
}

int sptd_query_pf_write_system_info(struct sptd_query_pf *pf)
{
	struct sptd_query_pb *pb = &pf->pkt;
	char release[128], version[256], machine[64];
	int64_t cpus = 0;

	meta_text(pf, "kernel", release, sizeof(release));
	meta_text(pf, "kernel_version", version, sizeof(version));
	meta_text(pf, "machine", machine, sizeof(machine));
	sptd_query_pb_uint(pb, TP_TIMESTAMP,
	                   (uint64_t)(pf->window_start < 0 ? 0 : pf->window_start));
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_META);
	sptd_query_pb_begin(pb, TP_SYSTEM_INFO);
	sptd_query_pb_begin(pb, SI_UTSNAME);
	sptd_query_pb_string(pb, UTS_SYSNAME, "Linux");
	if (version[0])
		sptd_query_pb_string(pb, UTS_VERSION, version);
	if (release[0])
		sptd_query_pb_string(pb, UTS_RELEASE, release);
	if (machine[0])
		sptd_query_pb_string(pb, UTS_MACHINE, machine);
	sptd_query_pb_end(pb);
	if (sptd_store_meta_get_int(pf->st, "cpus", &cpus) >= 0 && cpus > 0)
		sptd_query_pb_uint(pb, SI_NUM_CPUS, (uint64_t)cpus);
	sptd_query_pb_end(pb);
	return sptd_query_pf_flush(pf);
}
