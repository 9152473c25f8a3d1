/* test_spegen.c — sptd-spegen's perf.data read by perf's own Arm SPE
 * decoder (perf 6.1 has one on every architecture), sample by sample, and
 * by sysptd's import (mem_sample), row for row, against truth.csv.
 *
 * 1. sptd-spegen runs speprog-mem (loads, stores, LOCK-prefixed adds and
 *    XCHG) and writes DIR/perf.data and DIR/truth.csv.
 * 2. `perf script --itrace=M` prints one "memory" sample per truth row, in
 *    order, with the same tid, time, pc, data address, total latency
 *    (weight), physical address, operation (atomics are stores: the ST bit)
 *    and, for loads, the level the Neoverse data source names; TLB walks
 *    where the truth's events have one.
 * 3. `perf report -D` dumps one TS packet per row and no bad packet.
 * 4. `sysptd import` of the perf.data: mem_sample equals truth.csv.
 *
 * Args: SPEGEN PROG SYSPTD. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nm_addr.h"
#include "sptd_test.h"

#define MAXROWS 4096

struct truth {
	uint64_t ts, pc, vaddr, paddr, events;
	int pid, tid, source;     /* source -1: none (stores) */
	char op[16];
	char symbol[128];         /* the function (ELF symbol) of pc */
	unsigned lat_total, lat_issue, lat_xlat;
};

static struct truth rows[MAXROWS];
static size_t nrows;

static int read_truth(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EBADMSG;
	}
	while (nrows < MAXROWS && fgets(line, sizeof(line), f)) {
		struct truth *t = &rows[nrows];
		char *f2[14] = { 0 }, *p = line;
		int k = 0;

		line[strcspn(line, "\n")] = 0;
		for (; k < 14 && p; k++) {
			f2[k] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = 0;
		}
		if (k != 14) {
			fclose(f);
			return -EBADMSG;
		}
		t->ts = strtoull(f2[0], NULL, 10);
		t->pid = atoi(f2[2]);
		t->tid = atoi(f2[3]);
		t->pc = strtoull(f2[4], NULL, 16);
		snprintf(t->op, sizeof(t->op), "%s", f2[5]);
		t->vaddr = strtoull(f2[6], NULL, 16);
		t->paddr = f2[7][0] ? strtoull(f2[7], NULL, 16) : 0;
		t->events = strtoull(f2[8], NULL, 16);
		t->source = f2[9][0] ? atoi(f2[9]) : -1;
		t->lat_total = (unsigned)atoi(f2[10]);
		t->lat_issue = (unsigned)atoi(f2[11]);
		t->lat_xlat = (unsigned)atoi(f2[12]);
		snprintf(t->symbol, sizeof(t->symbol), "%s", f2[13]);
		nrows++;
	}
	fclose(f);
	return 0;
}

/* What perf's data_src string must say for @t. */
static void want_data_src(const struct truth *t, const char **op, const char **lvl,
                          const char **tlb)
{
	int load = strcmp(t->op, "load") == 0;

	*op = load ? "|OP LOAD|" : "|OP STORE|";
	*tlb = t->events & (1u << 5) ? "|TLB Walker miss|" : "|TLB Walker hit|";
	if (!load)
		*lvl = "|LVL N/A";
	else if (t->source == 0)
		*lvl = "|LVL L1 or L1 hit|";
	else if (t->source == 0xb)
		*lvl = "|LVL L3 or L3 hit|";
	else
		*lvl = "|LVL Local RAM or RAM hit|";
}

/* Whether perf's function name @sym names the truth's @want: the same
 * name, or an alias at the same address (____strtol_l_internal and
 * ____strtoll_l_internal are one function; nm says where each is). */
static int same_function(const char *prog, const char *sym, const char *want)
{
	uint64_t a;

	if (strcmp(sym, want) == 0)
		return 1;
	a = sptd_test_nm_addr(prog, want);
	return a && a == sptd_test_nm_addr(prog, sym);
}

static void check_perf_script(const char *data, const char *prog)
{
	char cmd[4400], line[1024], line2[1024];
	FILE *num, *src;
	size_t i = 0, bad = 0;

	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=M --ns -F hw:tid,time,ip,sym,"
	         "addr,weight,phys_addr 2>/dev/null", data);
	num = popen(cmd, "r");
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=M --ns -F hw:data_src 2>/dev/null",
	         data);
	src = popen(cmd, "r");
	if (!num || !src) {
		CHECK(!"perf script could not be started");
		goto out;
	}
	while (fgets(line, sizeof(line), num)) {
		unsigned long long sec, nsec, addr, ip, phys = 0;
		char sym[128] = "";
		unsigned weight;
		int tid, n;
		const char *op, *lvl, *tlb;

		if (!fgets(line2, sizeof(line2), src))
			line2[0] = 0;
		n = sscanf(line, "%d %llu.%llu: %llx %u %llx %127s %llx", &tid, &sec, &nsec, &addr,
		           &weight, &ip, sym, &phys);
		if (i >= nrows) {
			i++;
			continue;
		}
		want_data_src(&rows[i], &op, &lvl, &tlb);
		if (n < 7 || tid != rows[i].tid || !same_function(prog, sym, rows[i].symbol) ||
		    sec * 1000000000ull + nsec != rows[i].ts ||
		    addr != rows[i].vaddr || weight != rows[i].lat_total || ip != rows[i].pc ||
		    (rows[i].paddr ? n != 8 || phys != rows[i].paddr : 0) || !strstr(line2, op) ||
		    !strstr(line2, lvl) || !strstr(line2, tlb)) {
			if (bad++ < 5)
				fprintf(stderr, "row %zu: truth %" PRIu64 " 0x%" PRIx64 " %s 0x%" PRIx64
				        " lat %u src %d; perf: %s   %s", i, rows[i].ts, rows[i].pc,
				        rows[i].op, rows[i].vaddr, rows[i].lat_total, rows[i].source, line,
				        line2);
		}
		i++;
	}
	printf("perf script: %zu memory samples, truth %zu rows, %zu differ\n", i, nrows, bad);
	CHECK(i == nrows);
	CHECK(bad == 0);
out:
	if (num)
		pclose(num);
	if (src)
		pclose(src);
}

static void check_perf_dump(const char *data)
{
	char cmd[4400], line[1024];
	size_t ts = 0, badpkt = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "perf report -D -i '%s' 2>/dev/null", data);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(!"perf report could not be started");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, " TS "))
			ts++;
		if (strstr(line, "Bad packet"))
			badpkt++;
	}
	pclose(f);
	printf("perf report -D: %zu timestamps, %zu bad packets\n", ts, badpkt);
	CHECK(ts == nrows);
	CHECK(badpkt == 0);
}

/* `sysptd import` of the perf.data: mem_sample, joined to thread for the
 * tid, equals truth.csv row for row in every column. */
static void check_import(const char *sysptd, const char *dir)
{
	char cmd[8192], line[1024], want[1024];
	size_t i = 0, bad = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' import '%s/gen/perf.data' -o '%s/inc.db' 2>&1", sysptd, dir,
	         dir);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "'%s' query '%s/inc.db' --format csv \"SELECT m.ts, m.cpu, "
	         "t.tid, printf('0x%%x', m.pc), m.op, printf('0x%%x', m.vaddr), CASE WHEN m.paddr "
	         "IS NULL THEN '' ELSE printf('0x%%x', m.paddr) END, printf('0x%%x', m.events), "
	         "m.data_source, m.lat_total, m.lat_issue, m.lat_xlat, s.name FROM mem_sample m LEFT "
	         "JOIN thread t USING (utid) LEFT JOIN symbol s ON s.id = m.symbol_id ORDER BY "
	         "m.ts\"", sysptd, dir);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(!"sysptd query could not be started");
		return;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;                  /* the header */
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (i < nrows) {
			const struct truth *t = &rows[i];
			char paddr[32] = "", source[16] = "";

			if (t->paddr)
				snprintf(paddr, sizeof(paddr), "0x%" PRIx64, t->paddr);
			if (t->source >= 0)
				snprintf(source, sizeof(source), "%d", t->source);
			snprintf(want, sizeof(want), "%" PRIu64 ",0,%d,0x%" PRIx64 ",%s,0x%" PRIx64
			         ",%s,0x%" PRIx64 ",%s,%u,%u,%u,%s", t->ts, t->tid, t->pc, t->op, t->vaddr,
			         paddr, t->events, source, t->lat_total, t->lat_issue, t->lat_xlat,
			         t->symbol);
			if (strcmp(line, want) != 0 && bad++ < 5)
				fprintf(stderr, "mem_sample row %zu:\n  got  %s\n  want %s\n", i, line,
				        want);
		}
		i++;
	}
	pclose(f);
	printf("sysptd import: %zu mem_sample rows, truth %zu, %zu differ\n", i, nrows, bad);
	CHECK(i == nrows);
	CHECK(bad == 0);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/sptd-spegen-XXXXXX", cmd[8192], path[4200];
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: test_spegen SPEGEN PROG SYSPTD\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -o '%s/gen' -- '%s' 400", argv[1], dir, argv[2]);
	ret = system(cmd);
	if (WIFEXITED(ret) && WEXITSTATUS(ret) == 77)
		SPTD_SKIP("ptrace not permitted here");
	CHECK(ret == 0);
	snprintf(path, sizeof(path), "%s/gen/truth.csv", dir);
	CHECK(read_truth(path) == 0);
	CHECK(nrows > 100);
	{
		size_t ops[3] = { 0 };

		for (size_t i = 0; i < nrows; i++)
			ops[strcmp(rows[i].op, "load") == 0 ? 0 : strcmp(rows[i].op, "store") == 0 ? 1 : 2]++;
		printf("truth: %zu rows (%zu loads, %zu stores, %zu atomics)\n", nrows, ops[0], ops[1],
		       ops[2]);
		CHECK(ops[0] > 0 && ops[1] > 0 && ops[2] > 0);
	}
	snprintf(path, sizeof(path), "%s/gen/perf.data", dir);
	if (system("perf version >/dev/null 2>&1") != 0) {
		SPTD_SKIP_PART("perf is not installed: the comparison with perf's decoder");
	} else {
		check_perf_script(path, argv[2]);
		check_perf_dump(path);
	}
	check_import(argv[3], dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return SPTD_TEST_END();
}
