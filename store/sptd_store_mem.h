/* sptd_store_mem.h — the memory-sample tables (issue 32): raw_spe, the Arm
 * SPE bytes of each CPU as captured or imported (rows of struct
 * sptd_store_chunk_row, by cpu then seq), and mem_sample, one row per
 * sampled load, store or atomic, which derive rebuilds from raw_spe.
 * Added with SPTD_STORE_ADD(st, mem_sample, ...) / (st, raw_spe, ...). */
#ifndef SPTD_STORE_MEM_H
#define SPTD_STORE_MEM_H

#include <stdint.h>

#include "sptd_store.h"

#define sptd_store_raw_spe_row sptd_store_chunk_row

/* One mem_sample row (docs/SCHEMA.md). */
struct sptd_store_mem_sample_row {
	int64_t ts;               /* ns, the incident's clock */
	int cpu;                  /* < 0 NULL */
	int64_t utid;             /* < 0 NULL: the sample names no task */
	uint64_t pc;              /* the instruction */
	int64_t symbol_id;        /* symbol.id of its function; < 0 NULL (not known) */
	uint64_t vaddr, paddr;    /* data addresses; 0 NULL (not recorded) */
	const char *op;           /* "load", "store", "atomic", "branch", "other"; NULL unknown */
	int data_source;          /* the source's code (SPE Data Source packet); < 0 NULL */
	int lat_total, lat_issue, lat_xlat; /* cycles; < 0 NULL (no counter packet) */
	int64_t events;           /* the source's event bits (SPE Events packet); < 0 NULL */
};

#endif /* SPTD_STORE_MEM_H */
