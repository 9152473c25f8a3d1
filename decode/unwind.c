/* unwind.c — whole user stacks from a copy: the registers and the stack
 * bytes a --call-graph dwarf sample carries, unwound with the call-frame
 * information of the mapped files (.eh_frame in the file, .debug_frame in
 * it or in its separate debug file) by elfutils libdw's frame API, as perf
 * does: dwfl_attach_state with callbacks that give the copied registers
 * and read memory only out of the copied stack.
 *
 * The stack and the CFI come from users' processes: libdw reads memory
 * only through stack_read (inside the copy, nowhere else), files only
 * through descriptors the caller proved (find callback) and the debug
 * files sptd_dec_debuginfo_find vets, and an unwind stops after
 * SPTD_DEC_UNWIND_MAX_FRAMES frames, so a loop in forged CFI costs a
 * bounded walk and a bad unwind is a shorter stack.
 *
 * Divisions: the blob (raw_sample.ustack), modules (reporting files to
 * libdw as addresses need them), the thread callbacks, the walk. */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo-local.h"
#include "sptd_dec.h"

/* perf_regs x86-64 positions in the compacted SPTD_DEC_USTACK_REGS_MASK
 * order (AX BX CX DX SI DI BP SP IP R8..R15). */
enum { UREG_AX, UREG_BX, UREG_CX, UREG_DX, UREG_SI, UREG_DI, UREG_BP, UREG_SP, UREG_IP,
       UREG_R8 };
/* Ranges without a usable file remembered per process (no asking again). */
#define UNWIND_MAX_HOLES 64
/* Files reported per process at most (each holds a descriptor). */
#define UNWIND_MAX_MODULES 256

/* What a module keeps for its separate debug file: its own descriptor of
 * the mapped file and the mapping's name (where a .gnu_debuglink is
 * looked for); libdw's userdata of the module. */
struct unwind_file {
	int fd;                     /* a copy of the descriptor libdw took */
	char *name;                 /* the mapping's path */
};

struct sptd_dec_unwind {
	int pid;                    /* the process (libdw's thread id too) */
	sptd_dec_unwind_find_fn find; /* where its files are */
	void *find_ctx;
	Dwfl *dwfl;                 /* its modules and frame state */
	int attached;               /* dwfl_attach_state done */
	int nmodules;               /* files reported */
	struct unwind_file files[UNWIND_MAX_MODULES]; /* theirs, for debug files */
	struct { uint64_t start, end; } holes[UNWIND_MAX_HOLES]; /* no file there */
	int nholes, next_hole;      /* used entries, the next to overwrite */
	const struct sptd_dec_ustack *cur; /* the state being unwound */
	uint64_t *ips;              /* where its frames go */
	int max, n;                 /* room and frames so far */
};

/* ---- the blob ------------------------------------------------------------------ */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

size_t sptd_dec_ustack_size(size_t stack_len)
{
	return 8 * (1 + SPTD_DEC_USTACK_NREGS) + stack_len;
}

int sptd_dec_ustack_encode(const struct sptd_dec_ustack *us, void *buf, size_t len)
{
	unsigned char *out = buf;

	if (!us || !buf || (us->stack_len && !us->stack) || us->stack_len > SIZE_MAX / 2 ||
	    len < sptd_dec_ustack_size(us->stack_len))
		return -EINVAL;
	put64(out, SPTD_DEC_USTACK_REGS_MASK);
	for (int i = 0; i < SPTD_DEC_USTACK_NREGS; i++)
		put64(out + 8 * (1 + i), us->regs[i]);
	if (us->stack_len)
		memcpy(out + 8 * (1 + SPTD_DEC_USTACK_NREGS), us->stack, us->stack_len);
	return (int)sptd_dec_ustack_size(us->stack_len);
}

int sptd_dec_ustack_decode(const void *buf, size_t len, struct sptd_dec_ustack *us)
{
	const unsigned char *in = buf;

	if (!buf || !us)
		return -EINVAL;
	if (len < sptd_dec_ustack_size(0) || get64(in) != SPTD_DEC_USTACK_REGS_MASK)
		return -EBADMSG;
	for (int i = 0; i < SPTD_DEC_USTACK_NREGS; i++)
		us->regs[i] = get64(in + 8 * (1 + i));
	us->stack_len = len - sptd_dec_ustack_size(0);
	us->stack = us->stack_len ? in + sptd_dec_ustack_size(0) : NULL;
	return 0;
}

/* ---- modules --------------------------------------------------------------------- */

/* libdw asks for a file only for modules reported without one: none are. */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
                         Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

/* The separate debug file (.debug_frame for code whose .eh_frame is
 * stripped), only as sptd_dec_debuginfo_find finds and checks it: by
 * build-id, or by debuglink with its CRC, under the debug roots. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct unwind_file *uf = userdata ? *userdata : NULL;
	struct sptd_dec_elf *main_elf = NULL, *debug = NULL;
	char *build_id = NULL;
	int how = 0, fd = -1;

	(void)mod, (void)modname, (void)base, (void)file_name, (void)debuglink_file;
	(void)debuglink_crc, (void)debuginfo_file_name;
	if (!uf || uf->fd < 0 || sptd_dec_elf_open_fd_named(uf->fd, uf->name, &main_elf) < 0)
		return -1;
	if (sptd_dec_elf_build_id(main_elf, &build_id) < 0)
		build_id = NULL;
	if (sptd_dec_debuginfo_find(main_elf, build_id, &debug, &how) == 0)
		fd = sptd_dec_elf_dup_fd(debug);
	free(build_id);
	sptd_dec_elf_close(debug);
	sptd_dec_elf_close(main_elf);
	return fd < 0 ? -1 : fd;
}

static const Dwfl_Callbacks unwind_callbacks = {
	.find_elf = find_elf_none,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int in_hole(const struct sptd_dec_unwind *u, uint64_t addr)
{
	for (int i = 0; i < u->nholes; i++)
		if (addr >= u->holes[i].start && addr < u->holes[i].end)
			return 1;
	return 0;
}

static void add_hole(struct sptd_dec_unwind *u, uint64_t start, uint64_t end)
{
	if (end <= start) {
		start = 0;
		end = 0;
	}
	u->holes[u->next_hole].start = start;
	u->holes[u->next_hole].end = end;
	u->next_hole = (u->next_hole + 1) % UNWIND_MAX_HOLES;
	if (u->nholes < UNWIND_MAX_HOLES)
		u->nholes++;
}

/* Make sure the file whose code holds @addr is a module of u->dwfl: 1 it
 * is, 0 there is none to read. */
static int module_at(struct sptd_dec_unwind *u, uint64_t addr)
{
	struct sptd_dec_unwind_map map = { .fd = -1 };
	struct unwind_file *uf;
	Dwfl_Module *mod;
	void **userdata = NULL;
	int own;

	if (dwfl_addrmodule(u->dwfl, addr))
		return 1;
	if (in_hole(u, addr) || u->nmodules >= UNWIND_MAX_MODULES)
		return 0;
	if (u->find(u->find_ctx, addr, &map) < 0 || map.fd < 0 || addr < map.start ||
	    addr >= map.end || map.pgoff > map.start) {
		if (map.fd >= 0)
			close(map.fd);
		add_hole(u, map.start <= addr && addr < map.end ? map.start : addr,
		         map.start <= addr && addr < map.end ? map.end : addr + 1);
		return 0;
	}
	/* libdw takes map.fd: keep a copy for the separate debug file */
	own = fcntl(map.fd, F_DUPFD_CLOEXEC, 0);
	/* the file's first PT_LOAD at offset 0 sits at start - pgoff (shared
	 * objects and PIEs as linkers lay them out) */
	dwfl_report_begin_add(u->dwfl);
	mod = dwfl_report_elf(u->dwfl, map.name ? map.name : "?", map.name ? map.name : "?",
	                      map.fd, map.start - map.pgoff, false);
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!mod) {
		close(map.fd);
		if (own >= 0)
			close(own);
		add_hole(u, map.start, map.end);
		return 0;
	}
	uf = &u->files[u->nmodules++];
	uf->fd = own;
	uf->name = map.name ? strdup(map.name) : NULL;
	if (dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) && userdata)
		*userdata = uf;
	return dwfl_addrmodule(u->dwfl, addr) != NULL;
}

/* ---- the thread callbacks ------------------------------------------------------ */

/* One thread: the process itself, standing for whichever thread's copy is
 * being unwound. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sptd_dec_unwind *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->pid;
}

/* A word of the copied stack; anything outside it is unknown. */
static bool stack_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct sptd_dec_unwind *u = arg;
	const struct sptd_dec_ustack *us = u->cur;
	uint64_t sp = us->regs[UREG_SP], off;

	(void)dwfl;
	if (addr < sp || us->stack_len < 8)
		return false;
	off = addr - sp;
	if (off > us->stack_len - 8)
		return false;
	*result = get64(us->stack + off);
	return true;
}

/* The copied registers in DWARF's x86-64 numbering: rax rdx rcx rbx rsi
 * rdi rbp rsp r8..r15, then the return address column (rip). */
static bool set_registers(Dwfl_Thread *thread, void *arg)
{
	const struct sptd_dec_unwind *u = arg;
	const uint64_t *r = u->cur->regs;
	Dwarf_Word dw[17] = {
		r[UREG_AX], r[UREG_DX], r[UREG_CX], r[UREG_BX], r[UREG_SI], r[UREG_DI],
		r[UREG_BP], r[UREG_SP],
	};

	for (int i = 0; i < 8; i++)
		dw[8 + i] = r[UREG_R8 + i];
	dw[16] = r[UREG_IP];
	if (!dwfl_thread_state_registers(thread, 0, 17, dw))
		return false;
	dwfl_thread_state_register_pc(thread, r[UREG_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = stack_read,
	.set_initial_registers = set_registers,
};

/* ---- the walk -------------------------------------------------------------------- */

int sptd_dec_unwind_create(int pid, sptd_dec_unwind_find_fn find, void *ctx,
                           struct sptd_dec_unwind **out)
{
	struct sptd_dec_unwind *u;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (pid <= 0 || !find)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->pid = pid;
	u->find = find;
	u->find_ctx = ctx;
	u->dwfl = dwfl_begin(&unwind_callbacks);
	if (!u->dwfl) {
		free(u);
		return -ENOMEM;
	}
	*out = u;
	return 0;
}

/* Each frame: its pc, and the file of the code it returns into reported
 * before libdw steps out of it. */
static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct sptd_dec_unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	if (u->n >= u->max || pc == 0)
		return DWARF_CB_ABORT;
	/* a return address points after its call: the call's code is before */
	if (!module_at(u, activation ? pc : pc - 1))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

int sptd_dec_unwind_run(struct sptd_dec_unwind *u, const struct sptd_dec_ustack *us,
                        uint64_t *ips, int max)
{
	if (!u || !us || !ips || max <= 0 || (us->stack_len && !us->stack))
		return -EINVAL;
	if (max > SPTD_DEC_UNWIND_MAX_FRAMES)
		max = SPTD_DEC_UNWIND_MAX_FRAMES;
	u->cur = us;
	u->ips = ips;
	u->max = max;
	u->n = 0;
	/* libdw learns the machine from the first module: the IP's file */
	if (!module_at(u, us->regs[UREG_IP]))
		goto out;
	if (!u->attached) {
		if (!dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u))
			goto out;
		u->attached = 1;
	}
	/* its return says why the walk ended; the frames are what counts */
	dwfl_getthread_frames(u->dwfl, u->pid, on_frame, u);
out:
	u->cur = NULL;
	u->ips = NULL;
	return u->n;
}

void sptd_dec_unwind_destroy(struct sptd_dec_unwind *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	for (int i = 0; i < u->nmodules; i++) {
		if (u->files[i].fd >= 0)
			close(u->files[i].fd);
		free(u->files[i].name);
	}
	free(u);
}
