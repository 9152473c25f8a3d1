/* p2p.h — sptd-ptgen2perf: an sptd-ptgen output directory (docs/PTGEN.md)
 * rewritten as the perf.data that `perf record -e intel_pt//u
 * --switch-events -a` would have written for the same execution.
 *
 * input.c     reading config.txt, images.txt, maps.txt, tasks.txt, sched.txt
 * elfwrap.c   choosing each image's file: the original file when its bytes
 *             are the image, else a minimal ELF64 wrapping the flat image
 *             with the original file's (or the vdso's own) function symbols
 * perfwrite.c the perf.data file: header, attrs, records, feature sections
 *
 * All functions return 0 or a negative errno and put a sentence for the
 * user into the caller's @err buffer; nothing prints. */
#ifndef SPTD_P2P_H
#define SPTD_P2P_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* One code image of images.txt joined with its maps.txt line. */
struct sptd_p2p_image {
	uint64_t addr;            /* load address */
	uint64_t len;             /* bytes of the flat image */
	int pid;                  /* process that maps it */
	uint64_t cr3;             /* the process's invented CR3 (unused by perf) */
	char bin[PATH_MAX];       /* flat image file (absolute) */
	char file[PATH_MAX];      /* maps.txt file: original path or "[vdso]" */
	uint64_t pgoff;           /* maps.txt file offset of @addr */
	char mmap_path[PATH_MAX]; /* what MMAP2 names (elfwrap.c fills it) */
	uint64_t mmap_pgoff;      /* MMAP2 pgoff into @mmap_path */
	int wrapped;              /* 1: @mmap_path is a wrapper ELF */
};

/* One thread of tasks.txt. */
struct sptd_p2p_task {
	int pid, tid;             /* process and thread ids */
	char comm[16];            /* comm, NUL-terminated */
};

/* One context switch of sched.txt (0 is idle). */
struct sptd_p2p_switch {
	int64_t ts;               /* ns on the generator's clock */
	int cpu;                  /* virtual CPU */
	int prev, next;           /* tids */
};

/* Everything read from a generator directory. */
struct sptd_p2p_input {
	char dir[PATH_MAX];       /* the directory (absolute) */
	int family, model, stepping;  /* cpu_family/model/stepping */
	int mtc_freq, nom_freq;   /* MTC period exponent, nominal ratio */
	uint32_t cpuid15_eax, cpuid15_ebx; /* TSC/crystal ratio */
	uint64_t tsc_hz, core_hz; /* clocks */
	int timing;               /* 0 none, 1 tsc, 2 mtc, 3 cyc */
	int retcomp;              /* return compression on */
	unsigned psb_period;      /* bytes between PSBs */
	int cpus;                 /* virtual CPUs */
	int64_t start_ns, end_ns; /* data start and end */
	uint64_t switch_cycles;   /* cycles between two slices */
	int64_t switch_slack_ns;  /* how far switch records sit inside the idle
	                           * gap (perfwrite.c); input_read sets a
	                           * quarter of the gap, callers may change it */
	struct sptd_p2p_image *images;  /* heap, @nimages */
	size_t nimages;
	struct sptd_p2p_task *tasks;    /* heap, @ntasks */
	size_t ntasks;
	struct sptd_p2p_switch *sw;     /* heap, @nsw, in file (time) order */
	size_t nsw;
};

#define SPTD_P2P_TIMING_NONE 0
#define SPTD_P2P_TIMING_TSC  1
#define SPTD_P2P_TIMING_MTC  2
#define SPTD_P2P_TIMING_CYC  3

/* ---- input.c ---- */
/* Read the generator directory @dir into @in (zeroed first); free with
 * sptd_p2p_input_fini().  -ENOENT a file missing, -EBADMSG a bad line. */
int sptd_p2p_input_read(const char *dir, struct sptd_p2p_input *in, char *err, size_t errlen);
/* Free what input_read allocated; accepts a zeroed @in. */
void sptd_p2p_input_fini(struct sptd_p2p_input *in);
/* The pid of thread @tid (tid itself when unknown; 0 for idle). */
int sptd_p2p_input_pid(const struct sptd_p2p_input *in, int tid);

/* ---- elfwrap.c ---- */
/* Fill every image's mmap_path/mmap_pgoff: the original file when its
 * bytes at pgoff equal the image and @wrap_all is 0, else a wrapper ELF
 * written into @wrapdir (created).  -EIO/-errno on write errors. */
int sptd_p2p_images_prepare(struct sptd_p2p_input *in, const char *wrapdir, int wrap_all,
                            char *err, size_t errlen);
/* Write @code (@len bytes, to run at @addr) as an ELF64 executable @path
 * with one PT_LOAD and a .text section at @addr; function symbols of
 * @symsrc (an ELF file, or NULL) whose address plus its load bias falls in
 * the image go into .symtab.  @symsrc_mem/@symsrc_len: an in-memory ELF
 * instead (the vdso).  *code_off gets the file offset of @code. */
int sptd_p2p_elf_write(const char *path, uint64_t addr, const uint8_t *code, size_t len,
                       const char *symsrc, const uint8_t *symsrc_mem, size_t symsrc_len,
                       uint64_t map_start, uint64_t map_pgoff, uint64_t *code_off,
                       char *err, size_t errlen);

/* ---- perfwrite.c ---- */
/* The intel_pt attr config bits matching @in's timing and retcomp. */
uint64_t sptd_p2p_pt_config(const struct sptd_p2p_input *in);
/* Write @in as perf.data @path (replaced if it exists). */
int sptd_p2p_perf_write(const struct sptd_p2p_input *in, const char *path, char *err,
                        size_t errlen);

#endif /* SPTD_P2P_H */
