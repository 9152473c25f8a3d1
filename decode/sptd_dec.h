/* sptd_dec.h — decoding: symbols of code images, and Intel PT -> flow
 * events -> per-task call intervals.
 *
 * Only decode/ includes intel-pt.h; decode/ never includes sqlite3.h: it
 * emits through callback sinks and the program wires them to store/.
 *
 * Errors: >= 0 success, negative errno: -EINVAL bad argument, -ENOMEM,
 * -ENOENT missing file / no symbol, -EBADMSG not ELF or corrupt input,
 * -ENOEXEC an ELF of another machine, -EIO read failure.
 */
#ifndef SPTD_DEC_H
#define SPTD_DEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SPTD_LOG_FN_DEFINED
#define SPTD_LOG_FN_DEFINED
/* Log hook shared by all sysptd libraries: @level is a syslog level. */
typedef void (*sptd_log_fn)(void *ctx, int level, const char *msg);
#endif
/* Where decode/ reports warnings (a library never prints). */
void sptd_dec_set_log(sptd_log_fn fn, void *ctx);

/* ---- opening a file someone else controls (fileopen.c) -------------------- */

struct stat;

/* sptd_dec_file_open() flags. */
#define SPTD_DEC_OPEN_NOFOLLOW 0x1 /* refuse a symbolic link as the last component */
#define SPTD_DEC_OPEN_ANY_SIZE 0x2 /* no size limit (/proc/kcore) */
/* Largest file read without SPTD_DEC_OPEN_ANY_SIZE. */
#define SPTD_DEC_FILE_MAX (4ull << 30)

/* Open @path for reading the way every file a user controls is opened
 * (executables, libraries, debug files, images, uprobe targets): O_RDONLY |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC (| O_NOFOLLOW), then fstat what was
 * opened.  A FIFO or device never blocks the caller.  Returns the fd (the
 * caller closes it) and fills *@sb when not NULL.  -EINVAL bad arguments,
 * -ENXIO not a regular file (FIFO, socket, device), -EISDIR a directory,
 * -EFBIG over SPTD_DEC_FILE_MAX, -ELOOP a symlink with NOFOLLOW, or the
 * negative errno of open(2)/fstat(2). */
int sptd_dec_file_open(const char *path, int flags, struct stat *sb);
/* sptd_dec_file_open() of @path only when it is the file @dev/@ino (a
 * process's mapping as /proc/PID/maps names it; @dev 0: any device): the
 * path is first opened O_PATH (no open side effect, no permission used)
 * and compared, then that very inode is opened for reading, so what is
 * read is the file compared even if the path is swapped meanwhile.  The
 * fd (the caller closes it), or -ESTALE another file is at @path now, or
 * sptd_dec_file_open's errors. */
int sptd_dec_file_open_inode(const char *path, uint64_t dev, uint64_t ino, struct stat *sb);
/* Words for a sptd_dec_file_open() error (-ENXIO: "not a regular file
 * ..."); strerror() for the others.  Static storage. */
const char *sptd_dec_file_strerror(int err);

/* ---- symbols (symfile.c) -------------------------------------------------- */

/* One function symbol.  @name is demangled (C++, Rust legacy and v0, D,
 * OCaml) where possible. */
struct sptd_dec_sym {
	const char *name;   /* borrowed from the symfile, lives as long as it */
	uint64_t addr;      /* start in the file's own address space (ELF vaddr / kernel VA) */
	uint64_t size;      /* 0 if the symbol table gave none: lookup then
	                     * extends it to the next symbol */
};

/* The function symbols of one ELF file or of a kallsyms list, sorted for
 * binary search. */
struct sptd_dec_symfile;

/* .symtab and .dynsym function symbols (STT_FUNC, and STT_GNU_IFUNC), plus
 * those of its separate debug file or MiniDebugInfo when the file is
 * stripped (see SPTD_DEC_SYMS_*), and the GNU build-id note.  -ENOENT no
 * file, -EBADMSG not ELF. */
int sptd_dec_symfile_load_elf(const char *path, struct sptd_dec_symfile **out);
/* The same from the file open at @fd (the caller keeps and closes @fd): a
 * process's mapping opened through /proc/PID/map_files, so the symbols are
 * those of the bytes that ran.  -ENXIO @fd is not a regular file. */
int sptd_dec_symfile_load_elf_fd(int fd, struct sptd_dec_symfile **out);
/* sptd_dec_symfile_load_elf_fd, with @path (may be NULL) only naming the
 * file: a stripped file's .gnu_debuglink is looked for beside it.  Every
 * byte of the file itself is read from @fd. */
int sptd_dec_symfile_load_elf_fd_named(int fd, const char *path, struct sptd_dec_symfile **out);
/* sptd_dec_symfile_load_elf_head for the file open at @fd (the caller
 * keeps and closes @fd). */
int sptd_dec_symfile_load_elf_head_fd(int fd, struct sptd_dec_symfile **out);
/* The build-id and PT_LOAD headers of @path alone, without reading its
 * symbols (a few preads): enough for sptd_dec_symfile_build_id and
 * sptd_dec_symfile_bias; it holds no symbol.  Errors as
 * sptd_dec_symfile_load_elf. */
int sptd_dec_symfile_load_elf_head(const char *path, struct sptd_dec_symfile **out);
/* Text symbols (t/T/w/W) of a kallsyms file ("/proc/kallsyms" or a saved
 * copy); module symbols keep their "[module]" suffix out of the name.
 * -EACCES when every address reads as zero (kptr_restrict). */
int sptd_dec_symfile_load_kallsyms(const char *path, struct sptd_dec_symfile **out);
/* The @n function symbols @syms (runtime addresses, as kallsyms has them;
 * a size 0 reaches to the next one) as a symfile: the kernel functions an
 * incident stored, named again when it is decoded again.  -EINVAL,
 * -ENOMEM. */
int sptd_dec_symfile_from_list(const struct sptd_dec_sym *syms, size_t n,
                               struct sptd_dec_symfile **out);
/* Hex build-id or NULL (kallsyms, or an ELF without the note).  Borrowed. */
const char *sptd_dec_symfile_build_id(const struct sptd_dec_symfile *sf);
/* The symbol containing @addr (file address space).  0 and *sym filled, or
 * -ENOENT.  *sym borrowed for the life of @sf. */
int sptd_dec_symfile_lookup(const struct sptd_dec_symfile *sf, uint64_t addr,
                            struct sptd_dec_sym *sym);
/* For a mapping of this ELF at @map_start with file offset @pgoff: the bias
 * such that runtime address = file address + bias (from the PT_LOAD program
 * headers).  -ENOENT if no PT_LOAD covers @pgoff; kallsyms: bias 0. */
int sptd_dec_symfile_bias(const struct sptd_dec_symfile *sf, uint64_t map_start,
                          uint64_t pgoff, int64_t *bias);
/* The function named @name (C++: with or without its parameter list).
 * -ENOENT none, -ENOTUNIQ several different functions have that name. */
int sptd_dec_symfile_find(const struct sptd_dec_symfile *sf, const char *name,
                          struct sptd_dec_sym *sym);
/* The variable (ELF STT_OBJECT, .symtab or .dynsym) named @name in the ELF
 * file @path (opened as a user's file): its file address and size.
 * -ENOENT none, -ENOTUNIQ several, or the open's error. */
int sptd_dec_data_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size);
/* File offset of file address @addr (through the PT_LOAD headers); what a
 * uprobe is placed by.  -ENOENT when no loaded segment holds it. */
int sptd_dec_symfile_offset(const struct sptd_dec_symfile *sf, uint64_t addr,
                            uint64_t *offset);
/* Number of symbols. */
size_t sptd_dec_symfile_count(const struct sptd_dec_symfile *sf);

/* Where a symfile's symbols came from (sptd_dec_symfile_origin bits).  A
 * stripped ELF file (no .symtab) gets its function symbols, besides its own
 * .dynsym, from its separate debug file — found by build-id under a debug
 * root (ROOT/.build-id/xx/yyyy.debug) or by its .gnu_debuglink (CRC-32
 * checked) beside it, in .debug/ beside it, or under ROOT + its directory —
 * else from its MiniDebugInfo (.gnu_debugdata, xz).  Debug roots:
 * $SPTD_DEBUG_DIRS, colon-separated (set but empty: no separate debug
 * files), else /usr/lib/debug. */
#define SPTD_DEC_SYMS_FILE          0x1  /* the file's own .symtab / .dynsym */
#define SPTD_DEC_SYMS_BUILD_ID      0x2  /* a debug file found by build-id */
#define SPTD_DEC_SYMS_DEBUGLINK     0x4  /* a debug file found by .gnu_debuglink */
#define SPTD_DEC_SYMS_MINIDEBUGINFO 0x8  /* the file's .gnu_debugdata */
/* SPTD_DEC_SYMS_* bits of the sources that gave @sf symbols (0: none, or
 * kallsyms). */
int sptd_dec_symfile_origin(const struct sptd_dec_symfile *sf);
/* The separate debug file whose symbols @sf holds, NULL none.  Borrowed. */
const char *sptd_dec_symfile_debug_path(const struct sptd_dec_symfile *sf);
/* Accepts NULL. */
void sptd_dec_symfile_destroy(struct sptd_dec_symfile *sf);

/* ---- ELF files (elf.c): the one reader of ELF headers, segments and notes */

/* The GNU build-id of the 64-bit ELF file @path as lowercase hex (as
 * dso.build_id holds it).  -EINVAL, the negative errno of open(2)
 * (-ENOENT, -EACCES ...), -EBADMSG not a 64-bit little-endian ELF file,
 * -ENODATA no build-id note, -ENAMETOOLONG @hexlen too small, -ENOMEM,
 * -EIO libelf unusable. */
int sptd_dec_build_id(const char *path, char *hex, size_t hexlen);
/* sptd_dec_build_id of the file open at @fd (the caller keeps @fd): for
 * a file already proven to be the one wanted, so that what is checked is
 * what is read next.  Errors as sptd_dec_build_id, plus -ENXIO not a
 * regular file, -EFBIG too large. */
int sptd_dec_build_id_fd(int fd, char *hex, size_t hexlen);
/* Do two build-ids (hex, as above) name the same file?  Equal, or one is
 * the 40-digit head of the other: the kernel and perf keep 20 bytes of a
 * longer id (`ld --build-id=sha256`, mold), so a recorded id is the head
 * of the file's.  NULL or "" matches nothing. */
int sptd_dec_build_id_match(const char *a, const char *b);
/* The addresses the PT_LOAD segments of the ELF file @path span: the lowest
 * p_vaddr in *@lo, the highest p_vaddr + p_memsz in *@hi.  -EINVAL, the
 * negative errno of open(2), -EBADMSG not ELF or no PT_LOAD segment,
 * -ERANGE a segment that ends past 2^64, -EIO libelf unusable, -ENOMEM. */
int sptd_dec_elf_span(const char *path, uint64_t *lo, uint64_t *hi);
/* The bytes the 64-bit ELF file @path (an ELF core such as /proc/kcore)
 * holds for virtual addresses [@start, @end): from the first PT_LOAD
 * segment whose file bytes contain @start, @end clipped to that segment's
 * end.  *@buf is malloc'd (the caller frees it), its size in *@len.
 * -EINVAL (NULL, @end <= @start), the negative errno of open(2), -EBADMSG
 * not a 64-bit ELF file, -ENOENT no segment holds @start, -EIO short read or
 * libelf unusable, -ENOMEM. */
int sptd_dec_elf_read_vaddr(const char *path, uint64_t start, uint64_t end, void **buf,
                            size_t *len);

/* ---- kernel text rewritten while PT ran (textpoke.c) ---------------------- */

/* One PERF_RECORD_TEXT_POKE: at @ts (stamped once the new bytes were in
 * place) the kernel replaced the @old_len bytes @old_bytes at @addr with
 * the @new_len bytes @new_bytes (either may be 0: code added or dropped). */
struct sptd_dec_text_poke {
	int64_t ts;                   /* the record's time */
	uint64_t addr;                /* where */
	const uint8_t *old_bytes;     /* borrowed */
	const uint8_t *new_bytes;     /* borrowed */
	uint16_t old_len, new_len;    /* bytes of each */
};

/* @code holds @len bytes of kernel code at @addr as copied at @copy_ts
 * (kcore, after the freeze); make them what ran at @ts: every poke after
 * @ts and at or before @copy_ts is in the copy and is undone, newest first
 * (its old bytes put back where they meet @code).  Pokes after @copy_ts
 * were not in the copy; those at or before @ts had happened.  @pokes in
 * any order.  Returns how many pokes touched @code; -EINVAL (NULL, empty,
 * a range past 2^64, old bytes missing), -ENOMEM. */
int sptd_dec_text_as_of(uint8_t *code, size_t len, uint64_t addr, int64_t copy_ts, int64_t ts,
                        const struct sptd_dec_text_poke *pokes, size_t npokes);

struct sptd_dec_session;

/* Kernel code placed with add_bytes (the kcore copy) is decoded as it ran
 * at each packet's time: from @copied_ts (when the copy was read; default
 * INT64_MAX) back, every rewrite added here that meets the code is undone
 * for trace before it (sptd_dec_text_as_of's rule; textpatch.c).  Add
 * pokes in any order, before sptd_dec_session_run; their bytes are
 * copied.  0, -EINVAL (NULL, bytes missing, a range past 2^64), -ENOMEM. */
int sptd_dec_session_add_text_poke(struct sptd_dec_session *s,
                                   const struct sptd_dec_text_poke *p);
/* The time (incident ns) by which the kernel code placed with add_bytes
 * had been copied: pokes after it were not in the copy.  0 or -EINVAL. */
int sptd_dec_session_set_text_copied(struct sptd_dec_session *s, int64_t copied_ts);

/* ---- TSC -> ns (tsc.c): the one conversion, for PT and ftrace's x86-tsc -- */

/* How TSC values become ns on the incident clock.  The meta keys tsc_mult,
 * tsc_shift, tsc_zero and tsc_offset_ns hold the first form (perf's mmap
 * page: zero 0, offset time_zero); pt_tsc_hz the second. */
struct sptd_dec_tsc {
	uint64_t mult;       /* != 0: ns = (((tsc - zero) * mult) >> shift) + offset_ns */
	unsigned int shift;  /* 0..127 */
	uint64_t zero;       /* TSC subtracted first */
	int64_t offset_ns;   /* ns added last */
	uint64_t hz;         /* mult 0, hz != 0: ns = tsc * 1e9 / hz; both 0: ns = tsc */
};

/* @tsc in ns as @conv says (NULL: ns = tsc).  Never fails: the parameters
 * may come from a hostile file, so a shift of 128 or more shifts everything
 * out, and results beyond +-(2^62 - 1) ns (146 years) saturate there: a
 * span between any two times then fits an int64. */
int64_t sptd_dec_tsc_ns(const struct sptd_dec_tsc *conv, uint64_t tsc);

/* Demangle @mangled as c++filt and perf do (C++ Itanium ABI, Rust legacy and
 * v0, D; OCaml as perf does) into @buf, with parameter lists, Rust without
 * hashes; returns the full length (like snprintf: @buf may hold less), or
 * -EINVAL if @mangled is not a mangled name (then @buf holds a copy). */
int sptd_dec_demangle(const char *mangled, char *buf, size_t len);

/* ==== PT decoding: declarations below this line are owned by the PT decoder
 * (decode/session.c, image.c, aspace.c, flow*.c, stack.c ...). ============ */

/* Flow events, slices and sinks are plain data so that phase 2 can be driven
 * (and tested) without PT.  Times are ns on the incident clock, or an order
 * number when the trace has no timing (then SPTD_DEC_F_NO_TIME is set). */

/* slice kinds, the same strings as store/'s slice.kind */
#define SPTD_DEC_KIND_USER    "user"
#define SPTD_DEC_KIND_KERNEL  "kernel"
#define SPTD_DEC_KIND_SYSCALL "syscall"
#define SPTD_DEC_KIND_IRQ     "irq"
/* slice flags, the same bits as store/'s slice.flags */
#define SPTD_DEC_F_START_TRUNCATED 0x1  /* began before the data */
#define SPTD_DEC_F_END_TRUNCATED   0x2  /* still open at the data end */
#define SPTD_DEC_F_INFERRED        0x4  /* made up for a return on an empty stack */
#define SPTD_DEC_F_TAILCALL        0x8  /* entered by a jump replacing the caller's frame */
#define SPTD_DEC_F_NO_TIME        0x10  /* ts/dur are order numbers, not time */

/* What a flow event is.  Phase 1 emits them per CPU; phase 2 consumes them
 * per task. */
enum sptd_dec_flow_kind {
	SPTD_DEC_FLOW_CALL = 1,    /* near call at @from to @to */
	SPTD_DEC_FLOW_RETURN,      /* near return at @from to @to */
	SPTD_DEC_FLOW_JUMP,        /* non-conditional near jump leaving its function */
	SPTD_DEC_FLOW_FAR_CALL,    /* syscall/sysenter/far call at @from */
	SPTD_DEC_FLOW_FAR_RETURN,  /* sysret/iret/far ret at @from to @to */
	SPTD_DEC_FLOW_INTERRUPT,   /* asynchronous branch (or disable) at @from */
	SPTD_DEC_FLOW_ENABLE,      /* tracing (re)starts at @to */
	SPTD_DEC_FLOW_DISABLE,     /* tracing stops after @from */
	SPTD_DEC_FLOW_OVERFLOW,    /* the CPU lost trace: state unknown until @to */
	SPTD_DEC_FLOW_ERROR,       /* decode error; resynced at @to */
};

/* One flow event. */
struct sptd_dec_flow {
	int64_t ts;        /* ns on the incident clock, or order (flags NO_TIME) */
	uint64_t seq;      /* position in its CPU's stream: breaks ts ties */
	int cpu;           /* CPU whose PT produced it */
	int tid;           /* task running then (sched timeline); -1 unknown */
	int kind;          /* enum sptd_dec_flow_kind */
	int flags;         /* SPTD_DEC_F_NO_TIME */
	uint64_t from;     /* ip of the branching instruction; 0 unknown */
	uint64_t to;       /* target ip; 0 unknown (suppressed, untraced) */
};

/* A function as phase 2 sees it: where it starts and how long it is. */
struct sptd_dec_func {
	uint64_t start;    /* first byte; for unknown code the address itself */
	uint64_t size;     /* 0: unknown (only @start is known to be inside) */
	int64_t symbol_id; /* id given to the sink's symbol callback; -1 none */
	int known;         /* 1: a real symbol (a tail call needs one) */
};

/* Progress of a long decode, for a terminal: @phase ("decoding PT": @done
 * of @total PT bytes; "call stacks": events replayed), called from one
 * thread at a time (phase 1's under its pool lock). */
typedef void (*sptd_dec_progress_fn)(void *ctx, const char *phase, uint64_t done,
                                     uint64_t total);

/* Resolve @addr as seen by task @tid into @f.  Returns 0, or < 0 to abort. */
typedef int (*sptd_dec_func_fn)(void *ctx, int tid, uint64_t addr,
                                struct sptd_dec_func *f);

/* A symbol the slices refer to, reported once before the first slice that
 * names it. */
struct sptd_dec_symbol {
	int64_t id;          /* session-wide id (1, 2, ...) */
	const char *name;    /* demangled name or placeholder "dso+0xOFF" / "0xADDR" */
	int64_t dso_id;      /* the image's dso id as given when added; -1 none */
	uint64_t addr;       /* start in the dso's own address space */
	uint64_t size;       /* 0 unknown */
};

/* One call interval. */
struct sptd_dec_slice {
	int64_t id;          /* unique in one run; parent_id refers to it */
	int64_t ts, dur;     /* start and length (ns, or order with NO_TIME) */
	int cpu;             /* CPU where the frame began */
	int tid;             /* task; -1 unknown (then one stack per CPU) */
	int depth;           /* 0 outermost; consistent after inferred frames */
	int64_t parent_id;   /* enclosing slice, -1 for depth 0 */
	int64_t symbol_id;   /* sptd_dec_symbol.id, -1 none */
	const char *kind;    /* SPTD_DEC_KIND_* (static storage) */
	int flags;           /* SPTD_DEC_F_* */
};

/* What the PT says about the CPU itself (power.c): its core:bus ratio (CBR
 * packets: in every PSB+ and at each change), its C-states (MWAIT, PWRE,
 * PWRX: with the PT config bit pwr_evt) and the values programs wrote into
 * the trace (PTWRITE: bit ptw; its instruction with fup_on_ptw).  C-states
 * are numbered as in MWAIT's hint (the SDM's encoding for PWRE and PWRX
 * too): code n is C(n+1), code 15 is C0. */
enum sptd_dec_power_kind {
	SPTD_DEC_POWER_FREQ = 1,   /* the ratio is @cbr from @ts on (changes only) */
	SPTD_DEC_POWER_IDLE,       /* a C-state from @ts for @dur (PWRE .. PWRX) */
	SPTD_DEC_POWER_PTWRITE,    /* a PTWRITE of @payload (@size bytes) at @ts */
};
/* PWRX wake reasons */
#define SPTD_DEC_WAKE_INTERRUPT  0x1
#define SPTD_DEC_WAKE_STORE      0x2  /* a store to the monitored address */
#define SPTD_DEC_WAKE_AUTONOMOUS 0x4  /* the hardware's own decision */
struct sptd_dec_power {
	int kind;            /* enum sptd_dec_power_kind */
	int cpu;             /* whose PT said it */
	int64_t ts, dur;     /* ns; @dur for IDLE only */
	int flags;           /* IDLE: SPTD_DEC_F_START_TRUNCATED (its entry was
	                      * not seen: from where the CPU's data begin, or
	                      * after an overflow), SPTD_DEC_F_END_TRUNCATED */
	int tid;             /* PTWRITE: task running then (sched timeline), -1 unknown */
	unsigned cbr;        /* FREQ: core:bus ratio */
	int cstate;          /* IDLE: C-state the CPU resolved (PWRE), -1 unknown */
	int sub_cstate;      /* ... its sub-state, -1 unknown */
	int hw;              /* ... 1: entered by the hardware itself */
	int requested;       /* ... the C-state its MWAIT asked for, -1 none seen */
	int requested_sub;   /* ... and sub-state, -1 none */
	int last, deepest;   /* ... core C-state at the wake / deepest reached
	                      * (PWRX), -1 unknown */
	int wake;            /* ... SPTD_DEC_WAKE_* bits, 0 unknown */
	uint64_t payload;    /* PTWRITE */
	int size;            /* ... 4 or 8 bytes */
	uint64_t ip;         /* ... the instruction, 0 unknown (no FUP) */
};

/* Where results go.  Any callback may be NULL; a negative return aborts the
 * run with that value. */
struct sptd_dec_sink {
	void *ctx;
	int (*symbol)(void *ctx, const struct sptd_dec_symbol *sym);
	int (*slice)(void *ctx, const struct sptd_dec_slice *slice);
	/* a stretch of @cpu (-1: all) with no trustworthy data; @reason starts
	 * with "pt: " */
	int (*gap)(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason);
	/* a per-CPU figure (names as the stats table: pt_bytes, instructions,
	 * calls, returns, far_calls, far_returns, interrupts, decode_errors,
	 * gaps, decode_ns, decode_segments, cr3_mismatches; power_ns: the time
	 * the power walk of power.c took, with a power sink) */
	int (*stat)(void *ctx, const char *name, int cpu, int64_t value);
	/* power events and PTWRITEs, per CPU in time order (power.c); with it
	 * NULL the PT is not read for them */
	int (*power)(void *ctx, const struct sptd_dec_power *ev);
};

/* ---- phase 2: per-task shadow stacks (stack.c) ---------------------------- */

/* Symbol ids phase 2 uses itself for kernel entries; resolvers start at 3. */
#define SPTD_DEC_SYM_SYSCALL 1   /* "[syscall]" */
#define SPTD_DEC_SYM_IRQ     2   /* "[irq]" */

struct sptd_dec_stacks;

/* Shadow stacks resolving code addresses with @fn (may be NULL: every
 * address is its own unknown function) and emitting to @sink (copied).
 * -EINVAL (@sink NULL, @out NULL), -ENOMEM. */
int sptd_dec_stacks_create(sptd_dec_func_fn fn, void *fn_ctx,
                           const struct sptd_dec_sink *sink,
                           struct sptd_dec_stacks **out);
/* Queue one event (copied; any order: run sorts per task by ts, cpu, seq).
 * -EINVAL bad kind or NULL, -ENOMEM. */
int sptd_dec_stacks_add(struct sptd_dec_stacks *st, const struct sptd_dec_flow *ev);
/* Task @tid (> 0) ended at @ts: its last switch-out left it dead (X or Z).
 * Frames it still has open after its last event close there, unflagged,
 * instead of at the data end (an exit before its last event belonged to an
 * earlier task with that tid: not used).  For the next run only.  -EINVAL
 * (NULL, tid <= 0), -ENOMEM. */
int sptd_dec_stacks_add_exit(struct sptd_dec_stacks *st, int tid, int64_t ts);
/* Replay every queued event per task and emit all slices.  @start/@end are
 * the data window (frames begun before it start at @start, open ones end at
 * @end or at their task's exit); pass @start > @end to use the first/last
 * event times.  Returns the number of slices, -EINVAL, or a sink's error.
 * Clears the queue and the exits. */
int64_t sptd_dec_stacks_run(struct sptd_dec_stacks *st, int64_t start, int64_t end);
/* Report the replay's progress to @fn (NULL: none) every so many events. */
void sptd_dec_stacks_set_progress(struct sptd_dec_stacks *st, sptd_dec_progress_fn fn,
                                  void *ctx);
/* Accepts NULL. */
void sptd_dec_stacks_destroy(struct sptd_dec_stacks *st);

/* ---- the decode session: phase 1 + 2 over real PT (session.c, image.c, flow.c) */

/* How the PT was recorded. */
/* The flow decoders (sptd_dec_config.decoder): libipt's block decoder, or
 * sysptd's own on libipt's query layer (the same rows; stretches holding
 * PTWRITE packets are still decoded by libipt's). */
enum {
	SPTD_DEC_DECODER_LIBIPT = 0,
	SPTD_DEC_DECODER_SPTD = 1,
};

struct sptd_dec_config {
	int cpu_family, cpu_model, cpu_stepping; /* 0/0/0: unknown, no errata */
	int mtc_freq;            /* IA32_RTIT_CTL.MTCFreq (0: no MTC) */
	int nom_freq;            /* CPUID 0x16 nominal ratio (0: unknown, CYC unscaled) */
	uint32_t cpuid15_eax;    /* CPUID 0x15 TSC/crystal ratio denominator */
	uint32_t cpuid15_ebx;    /* ... and numerator */
	/* TSC -> ns (through sptd_dec_tsc_ns, the one conversion):
	 * ns = (((tsc - tsc_zero) * mult) >> shift) + offset_ns when
	 * @tsc_mult != 0 (perf's mmap page: zero 0, offset time_zero; the meta
	 * tsc_* keys the ftrace side uses); else ns = tsc * 1e9 / tsc_hz when
	 * @tsc_hz != 0; else ns = tsc (the incident clock is the TSC). */
	uint32_t tsc_mult;
	int tsc_shift;
	uint64_t tsc_zero;
	int64_t tsc_offset_ns;
	uint64_t tsc_hz;
	int no_timing;           /* 1: ignore timing packets, ts is order */
	int decoder;             /* SPTD_DEC_DECODER_*: which flow decoder */
	int jobs;                /* phase-1 threads; 0: number of cores */
	size_t segment_bytes;    /* cut each CPU's PT at PSBs about this far
	                          * apart and decode the pieces in parallel;
	                          * 0: automatic (with several threads, a
	                          * quarter of each thread's share, at least
	                          * 64 KiB).  The output is the same either
	                          * way. */
	sptd_dec_progress_fn progress; /* NULL: none */
	void *progress_ctx;      /* for @progress */
};

struct sptd_dec_session;

/* Empty session for @cfg (copied).  -EINVAL (NULL, negative fields), -ENOMEM. */
int sptd_dec_session_create(const struct sptd_dec_config *cfg,
                            struct sptd_dec_session **out);
/* Accepts NULL. */
void sptd_dec_session_destroy(struct sptd_dec_session *s);

/* Images.  @pid -1: seen by every task (kernel text, or the one process of a
 * trace without sched info); otherwise only by tasks of that process.
 * @dso_id is passed back in symbols (-1 none).  -EINVAL, -ENOENT no file,
 * -EBADMSG not ELF (elf) / empty, -ENOMEM. */
/* An ELF file loaded by its PT_LOAD program headers at vaddr + @bias; its
 * symbols name the functions. */
int sptd_dec_session_add_elf(struct sptd_dec_session *s, int pid, const char *path,
                             int64_t bias, int64_t dso_id);
/* The whole file @path as flat bytes at @addr (no symbols: placeholders). */
int sptd_dec_session_add_flat(struct sptd_dec_session *s, int pid, const char *path,
                              uint64_t addr, int64_t dso_id);
/* @len bytes copied from @data at @addr; @name names placeholders. */
int sptd_dec_session_add_bytes(struct sptd_dec_session *s, int pid, const char *name,
                               const void *data, size_t len, uint64_t addr,
                               int64_t dso_id);
/* Kernel code placed with add_bytes (kernel text, modules, JIT: the
 * upper half) and named by no symbols of its own is named by @sf, whose
 * addresses are runtime ones (kallsyms).  @sf is borrowed for the
 * session's life.  Call after the images are placed, before text pokes.
 * The number of images it names, -EINVAL. */
int sptd_dec_session_kernel_syms(struct sptd_dec_session *s, const struct sptd_dec_symfile *sf);
/* Why the kernel's code has no image here (an incident whose kernel text
 * could not be copied: its meta pt_kernel_image): a gap where the trace
 * runs into a kernel address no image covers names it ("pt: kernel text
 * not captured (@note), ip ...").  NULL or "" forgets it.  -EINVAL, -ENOMEM. */
int sptd_dec_session_set_kernel_note(struct sptd_dec_session *s, const char *note);
/* Task @tid belongs to process @pid (default: pid = tid). */
int sptd_dec_session_add_task(struct sptd_dec_session *s, int tid, int pid);
/* The one task @cpu's PT belongs to when that trace has no timing (a
 * task-bound recording, perf record CMD: its AUXTRACE records name it):
 * its switches cannot be placed, and without this every record keeps the
 * task before the first switch (the idle task). */
int sptd_dec_session_set_untimed_tid(struct sptd_dec_session *s, int cpu, int tid);
/* On @cpu at @ts (ns) @prev_tid stopped and @next_tid started. */
int sptd_dec_session_add_switch(struct sptd_dec_session *s, int64_t ts, int cpu,
                                int prev_tid, int next_tid);
/* Task @tid (> 0) ended at @ts (ns): the switch-out that left it dead (X
 * or Z).  Frames it still has open at its end close there, not at the data
 * end (sptd_dec_stacks_add_exit).  -EINVAL, -ENOMEM. */
int sptd_dec_session_add_exit(struct sptd_dec_session *s, int tid, int64_t ts);
/* Append @len bytes of raw PT of @cpu (0..1023), copied. */
int sptd_dec_session_add_pt(struct sptd_dec_session *s, int cpu, const void *data,
                            size_t len);
/* Decode: phase 1 per CPU in parallel (a big CPU's PT in segments cut at
 * PSBs, stitched back exactly: the output does not depend on the number of
 * threads), then phase 2; everything goes to @sink, from the calling
 * thread.  Returns the number of slices, or -EINVAL / -ENOMEM / a sink
 * error.  Decode errors are not failures: they become gaps. */
int64_t sptd_dec_session_run(struct sptd_dec_session *s, const struct sptd_dec_sink *sink);
/* 1 when the last run found no timing packet (or no_timing was set). */
int sptd_dec_session_no_time(const struct sptd_dec_session *s);

/* Phase 1 alone for one CPU: its flow events through @fn (tests, bench).
 * Returns the number of events, or a negative error. */
typedef int (*sptd_dec_flow_fn)(void *ctx, const struct sptd_dec_flow *ev);
int64_t sptd_dec_session_run_cpu(struct sptd_dec_session *s, int cpu,
                                 const struct sptd_dec_sink *sink,
                                 sptd_dec_flow_fn fn, void *ctx);

/* ---- DWARF unwinding of a copied user stack (unwind.c) -------------------- */

/* The user registers a copied stack comes with: x86-64's perf_regs order
 * (AX BX CX DX SI DI BP SP IP, R8..R15), and their perf_regs mask. */
#define SPTD_DEC_USTACK_NREGS 17
#define SPTD_DEC_USTACK_REGS_MASK 0xff01ffull
/* The most frames one unwind gives (and so the most steps it takes). */
#define SPTD_DEC_UNWIND_MAX_FRAMES 127

/* A thread's user state at a sample: its registers and a copy of its stack
 * from the stack pointer up. */
struct sptd_dec_ustack {
	uint64_t regs[SPTD_DEC_USTACK_NREGS]; /* perf_regs order (above) */
	const unsigned char *stack; /* the bytes at regs' SP and up (borrowed) */
	size_t stack_len;           /* bytes of @stack */
};
/* The raw_sample.ustack blob (docs/SCHEMA.md): little-endian u64 mask
 * (SPTD_DEC_USTACK_REGS_MASK), the 17 u64 registers, then the stack bytes.
 * Bytes it takes for a stack of @stack_len. */
size_t sptd_dec_ustack_size(size_t stack_len);
/* Write @us into @buf (@len >= sptd_dec_ustack_size): bytes written, or
 * -EINVAL. */
int sptd_dec_ustack_encode(const struct sptd_dec_ustack *us, void *buf, size_t len);
/* Read a blob back into *@us (@us->stack points into @buf): 0, -EINVAL,
 * -EBADMSG (shorter than the registers, another mask). */
int sptd_dec_ustack_decode(const void *buf, size_t len, struct sptd_dec_ustack *us);

/* Where a process maps the file whose code holds an address, with a
 * descriptor proven to be that file. */
struct sptd_dec_unwind_map {
	uint64_t start, end;        /* the mapping [start, end) */
	uint64_t pgoff;             /* its file offset */
	int fd;                     /* the file, read-only; taken over by the
	                             * unwinder (closed on every path) */
	const char *name;           /* its name, for messages (borrowed) */
};
/* Find the mapping holding @addr in the unwinder's process: 0 and *@map,
 * or < 0 (-ENOENT: none, or no file to read: the unwind stops there; set
 * @map->start/end to the range to stop asking about). */
typedef int (*sptd_dec_unwind_find_fn)(void *ctx, uint64_t addr,
                                       struct sptd_dec_unwind_map *map);

/* One process's unwinder (elfutils libdw over .eh_frame, .debug_frame and
 * the separate debug files sptd_dec_debuginfo finds): files are opened
 * only through @find, and read once for all of its unwinds. */
struct sptd_dec_unwind;
/* 0 and *@out, -EINVAL, -ENOMEM. */
int sptd_dec_unwind_create(int pid, sptd_dec_unwind_find_fn find, void *ctx,
                           struct sptd_dec_unwind **out);
/* Unwind @us: the IP then each caller's return address into @ips (at most
 * @max, itself at most SPTD_DEC_UNWIND_MAX_FRAMES), innermost first, as
 * the kernel's call chain lists a user stack.  Reads only @us's stack
 * bytes and the mapped files; a stack it cannot follow further ends there.
 * The number of entries (0 when even the IP has no file), -EINVAL. */
int sptd_dec_unwind_run(struct sptd_dec_unwind *u, const struct sptd_dec_ustack *us,
                        uint64_t *ips, int max);
/* Accepts NULL: closes every file. */
void sptd_dec_unwind_destroy(struct sptd_dec_unwind *u);

/* ---- Arm SPE packets -> memory samples (spe.c) ----------------------------
 * Written from the Arm Architecture Reference Manual's Statistical
 * Profiling Extension packet format: a record is a run of packets closed by
 * a Timestamp or End packet; Padding is skipped.  Bytes that are no packet
 * (or a packet cut off by the end of the buffer) are counted, the record
 * they fell into is dropped, and decoding resumes at the next byte. */

/* What a record's Operation Type packet says, as sysptd names it. */
enum sptd_dec_spe_op {
	SPTD_DEC_SPE_OP_NONE = 0, /* no Operation Type packet */
	SPTD_DEC_SPE_OP_LOAD,     /* load (LD/ST class, ST bit clear) */
	SPTD_DEC_SPE_OP_STORE,    /* store (ST bit set) */
	SPTD_DEC_SPE_OP_ATOMIC,   /* atomic or exclusive load/store (AT subclass) */
	SPTD_DEC_SPE_OP_BRANCH,   /* branch or exception return */
	SPTD_DEC_SPE_OP_OTHER,    /* other operation */
};

/* Events packet bits (the architected ones). */
#define SPTD_DEC_SPE_EV_EXCEPTION  (1u << 0)  /* generated an exception */
#define SPTD_DEC_SPE_EV_RETIRED    (1u << 1)  /* architecturally retired */
#define SPTD_DEC_SPE_EV_L1D_ACCESS (1u << 2)  /* level 1 data cache access */
#define SPTD_DEC_SPE_EV_L1D_MISS   (1u << 3)  /* level 1 data cache refill */
#define SPTD_DEC_SPE_EV_TLB_ACCESS (1u << 4)  /* TLB access */
#define SPTD_DEC_SPE_EV_TLB_WALK   (1u << 5)  /* TLB refill: a table walk */
#define SPTD_DEC_SPE_EV_NOT_TAKEN  (1u << 6)  /* conditional branch not taken */
#define SPTD_DEC_SPE_EV_MISPRED    (1u << 7)  /* branch mispredicted */
#define SPTD_DEC_SPE_EV_LLC_ACCESS (1u << 8)  /* last level cache access */
#define SPTD_DEC_SPE_EV_LLC_MISS   (1u << 9)  /* last level cache miss */
#define SPTD_DEC_SPE_EV_REMOTE     (1u << 10) /* access to another socket */
#define SPTD_DEC_SPE_EV_ALIGNMENT  (1u << 11) /* misaligned access */

/* Which fields of a record its packets set (sptd_dec_spe_record.have). */
#define SPTD_DEC_SPE_HAVE_PC       (1u << 0)
#define SPTD_DEC_SPE_HAVE_TARGET   (1u << 1)
#define SPTD_DEC_SPE_HAVE_VADDR    (1u << 2)
#define SPTD_DEC_SPE_HAVE_PADDR    (1u << 3)
#define SPTD_DEC_SPE_HAVE_TS       (1u << 4)
#define SPTD_DEC_SPE_HAVE_CONTEXT  (1u << 5)
#define SPTD_DEC_SPE_HAVE_EVENTS   (1u << 6)
#define SPTD_DEC_SPE_HAVE_SOURCE   (1u << 7)
#define SPTD_DEC_SPE_HAVE_LAT_TOTAL (1u << 8)
#define SPTD_DEC_SPE_HAVE_LAT_ISSUE (1u << 9)
#define SPTD_DEC_SPE_HAVE_LAT_XLAT  (1u << 10)

/* One sampled operation. */
struct sptd_dec_spe_record {
	uint32_t have;            /* SPTD_DEC_SPE_HAVE_* */
	uint64_t pc;              /* instruction virtual address */
	int el;                   /* exception level the instruction ran at */
	uint64_t target;          /* branch target */
	uint64_t vaddr, paddr;    /* data virtual (tag removed) / physical address */
	uint64_t ts;              /* Timestamp packet (the generic timer) */
	uint32_t context;         /* CONTEXTIDR (Linux: the tid) */
	enum sptd_dec_spe_op op;  /* what the operation was */
	uint8_t op_class, op_bits; /* Operation Type packet: class and payload */
	uint64_t events;          /* SPTD_DEC_SPE_EV_* and implementation bits */
	uint16_t source;          /* Data Source packet (implementation defined) */
	uint16_t lat_total;       /* cycles from dispatch to completion */
	uint16_t lat_issue;       /* cycles from dispatch to issue */
	uint16_t lat_xlat;        /* cycles of the address translation */
};

/* What one buffer held. */
struct sptd_dec_spe_stats {
	uint64_t records;         /* records handed to the callback */
	uint64_t bad_bytes;       /* bytes that began no valid packet */
	uint64_t dropped;         /* records dropped for a bad byte inside them */
	uint64_t truncated;       /* 1: the buffer ended inside a packet */
	uint64_t unknown;         /* valid packets sysptd does not use (skipped) */
};

/* Decode @buf[0..@len) and hand each complete record to @fn (the record
 * is valid during the call).  Adds to *@stats (may be NULL).  Returns the
 * records delivered, -EINVAL (NULL @buf with @len, or NULL @fn), or the
 * first negative value @fn returns. */
int64_t sptd_dec_spe_decode(const uint8_t *buf, size_t len,
                            int (*fn)(void *ctx, const struct sptd_dec_spe_record *r),
                            void *ctx, struct sptd_dec_spe_stats *stats);
/* "load", "store", "atomic", "branch", "other" or NULL (none). */
const char *sptd_dec_spe_op_name(enum sptd_dec_spe_op op);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_DEC_H */
