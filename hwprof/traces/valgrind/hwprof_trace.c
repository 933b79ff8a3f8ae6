/* hwprof_trace: a valgrind tool that records loads (with their values) and
   control transfers of a program as packed binary records.

   Part of hwprof.  Built on first use by hwprof/sim/trace_capture.py
   against the installed valgrind tool headers and static libraries; run as
   `valgrind --tool=hwprof ...` with VALGRIND_LIB pointing at the private
   build directory.

   Records are kept in columns, as the trace format stores them: a block of
   up to C records (--block-records=C) is laid out as
       u8 kind[C] | u8 size[C] | u64 pc[C] | u64 addr[C] | u64 value[C]
   (little-endian; 26 C bytes), so that the reader encodes the columns where
   they are, without splitting records.
   kinds: LOAD=0 COND_NOT_TAKEN=1 COND_TAKEN=2 JUMP=3 CALL=4 RETURN=5
          INDIRECT=6 BLOCK=7
   load:   pc of the loading instruction, data address, value zero-extended
           (the low 8 bytes of a wider load), size in bytes
   branch: pc of the branch, target (where control went), fall-through pc+len
   block:  superblock start (a basic block: guest chasing is off)

   Output, one of two ways:
   - --out-file=PATH alone: each full (or final) block is written to PATH as
     a 16-byte header (u32 magic "HWPB", u32 0, u64 n) and the first n
     elements of each column, in the order above.
   - --out-file=FIFO with --shm-fd=F --ack-fd=A (hwprof/sim/trace_capture.py):
     F is a shared memory file of S blocks (--shm-blocks=S) that this tool
     fills in place; for each filled block it writes a 16-byte message
     (u32 magic "HWPM", u32 block index, u64 n) to FIFO, and it reuses a
     block only after the reader has written that block's index (one byte)
     to the pipe A.  No record is copied through a pipe.

   How it works.  Records are written by inline IR (no helper call per
   record): each superblock loads the buffer pointer (walking the pc
   column) and the kind column's offset once, every record stores its five
   fields and advances a temporary, and the pointer is stored back before
   every exit.  At superblock entry one guarded helper call
   flushes the buffer when the superblock's worst case would not fit, when
   the --skip threshold has been crossed, or when --limit is near.  Records
   written while skipping are discarded at flush time.  Guest instructions
   are counted the same way (a per-superblock constant added at each exit),
   so --skip is exact to a basic block.

   Control transfers are recognised from the instruction bytes (amd64
   opcodes), not from the IR shape: VEX may invert a conditional exit (so
   taken = target != fall-through), and rep-prefixed string instructions
   also end superblocks with Boring exits.  A conditional branch is the
   instruction owning a Boring Ist_Exit; if the exit is not taken control
   goes to the next IMark of the same superblock (chasing or unrolling) or
   to the superblock's `next`.  Unconditional transfers (jmp, call, ret) are
   recorded at the superblock end with `next` as target, or with the next
   IMark's address when VEX chased through them.

   Loads: Iex_Load (the value is the loaded temporary), Ist_LoadG (guarded:
   the record is kept only when the guard holds), Ist_CAS (the old value
   read; not again when it only re-reads a load of the same instruction, as
   VEX's locked read-modify-writes do), Ist_LLSC load-linked, and dirty
   helpers that read memory (mFx Ifx_Read/Modify: value read with a guarded
   load of the first bytes).

   Fork: the child switches to a private block and records nothing (the
   parent owns the shared blocks and the output).  Exec: the block is handed
   over before execve (the new image runs without the tool).  The output and
   release descriptors live in valgrind's reserved range, so the program
   cannot close them; the shared memory descriptor is closed once mapped.
   Threads: valgrind runs one thread at a time and switches only between
   superblocks, so one block serves all.
*/

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_vkiscnums.h"

/* Not in the tool headers but in libcoregrind (m_libcfile.c): moves an fd into
   valgrind's reserved range (the program cannot close or reuse it) and sets
   close-on-exec. */
extern Int VG_(safe_fd)(Int oldfd);
/* Also in libcoregrind (m_aspacemgr): a MAP_SHARED file mapping in valgrind's own
   address space (pub_core_aspacemgr.h). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd,
                                                       Off64T offset);

#define K_LOAD 0
#define K_NOT_TAKEN 1
#define K_TAKEN 2
#define K_JUMP 3
#define K_CALL 4
#define K_RETURN 5
#define K_INDIRECT 6
#define K_BLOCK 7

#define STEP 8                          /* ptr walks the u64 pc column */
#define BLOCK_MAGIC 0x42505748u         /* "HWPB": a block in --out-file */
#define MESSAGE_MAGIC 0x4D505748u       /* "HWPM": a block filled in shared memory */
#define MAX_SHM_BLOCKS 255              /* block indices travel as one byte */

/* ---- options ---- */
static const HChar* clo_out = NULL;      /* --out-file=PATH (a FIFO or a file) */
static const HChar* clo_stats = NULL;    /* --stats-file=PATH (JSON at the end) */
static Bool clo_loads = True;            /* --trace-loads=yes|no */
static Bool clo_branches = True;         /* --trace-branches=yes|no */
static Bool clo_blocks = False;          /* --trace-blocks=yes|no */
static Long clo_skip = 0;                /* --skip-instrs=N */
static Long clo_limit = -1;              /* --limit-records=N (-1: none) */
static Long clo_block = 1 << 20;         /* --block-records=C */
static Long clo_shm_fd = -1;             /* --shm-fd=F (-1: write blocks to --out-file) */
static Long clo_shm_blocks = 4;          /* --shm-blocks=S */
static Long clo_ack_fd = -1;             /* --ack-fd=A */

/* ---- state shared with the generated IR (addresses are baked into code) ---- */
/* next free pc slot of the block, and kind column address - (pc slot address >> 3);
   adjacent: the entry check's dirty call declares that it rewrites both */
static struct { ULong ptr; ULong kind_delta; } cur;
#define buf_ptr cur.ptr
static ULong ptr_limit;      /* entry check: flush when ptr + worst case > ptr_limit */
static ULong skip_at;        /* entry check: flush when icount >= skip_at */
static ULong icount;         /* guest instructions executed (counted at exits) */

static UChar* buf;           /* the pc column of the current block */
static ULong buf_end;
static UChar* block_base;    /* the current block (its kind column) */
static UChar* shm_base;      /* the shared blocks (NULL: --out-file mode) */
static UChar free_blocks[MAX_SHM_BLOCKS];
static Int n_free;
static Int out_fd = -1;
static Int ack_fd = -1;
static Bool skipping;        /* still before --skip */
static Bool disabled;        /* forked child, or the output failed */
static Bool finished;        /* stats written */
static ULong written;        /* records written to out_fd */
static ULong skipped_instrs; /* icount when recording started */
static ULong n_branch_mid;   /* diagnostic: transfers found inside a superblock */

static void write_all(const UChar* p, ULong n)
{
   while (n > 0 && !disabled) {
      Int chunk = n > (1 << 20) ? (1 << 20) : (Int)n;
      Int r = VG_(write)(out_fd, p, chunk);
      if (r <= 0) {
         VG_(umsg)("hwprof: write to %s failed; recording stopped\n", clo_out);
         disabled = True;
         return;
      }
      p += r;
      n -= r;
   }
}

static void write_stats(Int exitcode, Bool at_limit)
{
   HChar text[512];
   SysRes sr;
   if (finished || clo_stats == NULL)
      return;
   finished = True;
   VG_(snprintf)(text, sizeof text,
      "{\"guest_instructions\": %llu, \"skipped_instructions\": %llu, "
      "\"records\": %llu, \"stopped_at_limit\": %s, \"exit_code\": %d, "
      "\"transfers_inside_superblock\": %llu, \"pid\": %d}\n",
      icount, skipped_instrs, written, at_limit ? "true" : "false",
      exitcode, n_branch_mid, VG_(getpid)());
   sr = VG_(open)(clo_stats, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
   if (sr_isError(sr)) {
      VG_(umsg)("hwprof: cannot write %s\n", clo_stats);
      return;
   }
   VG_(write)(sr_Res(sr), text, VG_(strlen)(text));
   VG_(close)(sr_Res(sr));
}

/* Make `base` (a block of clo_block records) the one being filled. */
static void use_block(UChar* base)
{
   block_base = base;
   buf = base + 2 * clo_block;
   buf_end = (ULong)(Addr)buf + (ULong)clo_block * STEP;
   cur.kind_delta = (ULong)(Addr)base - ((ULong)(Addr)buf >> 3);
   buf_ptr = (ULong)(Addr)buf;
}

/* A block of this process's own memory (a forked child, or the output failed):
   records written there go nowhere. */
static void use_private_block(void)
{
   use_block(VG_(malloc)("hwprof.block", 26 * (SizeT)clo_block));
   shm_base = NULL;
}

static void fail(const HChar* what)
{
   if (!disabled)
      VG_(umsg)("hwprof: %s; recording stopped\n", what);
   disabled = True;
}

/* Hand the first n records of the current block to the reader and start another. */
static void emit_block(ULong n)
{
   ULong header[2];
   if (disabled || n == 0)
      return;
   if (shm_base == NULL) {
      header[0] = BLOCK_MAGIC;
      header[1] = n;
      write_all((const UChar*)header, sizeof header);
      write_all(block_base, n);                          /* kind */
      write_all(block_base + clo_block, n);              /* size */
      write_all(buf, n * 8);                             /* pc */
      write_all(buf + 8 * clo_block, n * 8);             /* addr */
      write_all(buf + 16 * clo_block, n * 8);            /* value */
      buf_ptr = (ULong)(Addr)buf;
      return;
   }
   header[0] = MESSAGE_MAGIC | ((ULong)((block_base - shm_base) / (26 * clo_block)) << 32);
   header[1] = n;
   write_all((const UChar*)header, sizeof header);
   while (n_free == 0 && !disabled) {   /* wait until the reader releases a block */
      UChar got[MAX_SHM_BLOCKS];
      Int i, r = VG_(read)(ack_fd, got, sizeof got);
      if (r <= 0) {
         fail("the reader went away");
         break;
      }
      for (i = 0; i < r; i++) {
         if (got[i] >= clo_shm_blocks || n_free == clo_shm_blocks) {
            fail("bad block release");
            break;
         }
         free_blocks[n_free++] = got[i];
      }
   }
   if (disabled) {
      use_private_block();
      return;
   }
   use_block(shm_base + (SizeT)free_blocks[--n_free] * 26 * clo_block);
}

static void set_limits(void)
{
   ptr_limit = buf_end;
   if (!skipping && clo_limit >= 0) {
      ULong room = ((ULong)clo_limit - written) * STEP;
      if ((ULong)(Addr)buf + room < ptr_limit)
         ptr_limit = (ULong)(Addr)buf + room;
   }
   skip_at = skipping ? (ULong)clo_skip : ~0ULL;
}

/* Called (guarded) at superblock entry; `worst` is the superblock's maximum
   number of record bytes. */
static VG_REGPARM(1) void entry_check(ULong worst)
{
   ULong used;
   if (disabled) {
      buf_ptr = (ULong)(Addr)buf;   /* a private block: records go nowhere */
      ptr_limit = buf_end;
      skip_at = ~0ULL;
      return;
   }
   if (skipping && icount >= (ULong)clo_skip) {
      skipping = False;                /* records so far belong to the skipped part */
      skipped_instrs = icount;
      buf_ptr = (ULong)(Addr)buf;
   }
   if (skipping) {
      if (buf_ptr + worst > buf_end)
         buf_ptr = (ULong)(Addr)buf;
      set_limits();
      return;
   }
   used = (buf_ptr - (ULong)(Addr)buf) / STEP;
   if (clo_limit >= 0 && written + used >= (ULong)clo_limit) {
      emit_block((ULong)clo_limit - written);
      written = clo_limit;
      VG_(close)(out_fd);
      write_stats(0, True);
      VG_(exit)(0);
   }
   if (buf_ptr + worst > buf_end) {
      emit_block(used);
      written += used;
      buf_ptr = (ULong)(Addr)buf;
   }
   set_limits();
}

/* ---- instruction classification (amd64 bytes) ---- */
enum { C_NONE, C_COND, C_JUMP, C_IJUMP, C_CALL, C_RET };

static Int classify(Addr pc)
{
   const UChar* p = (const UChar*)pc;
   Int i = 0;
   UChar op, modrm;
   for (;;) {   /* legacy prefixes */
      UChar b = p[i];
      if (b == 0x26 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x64 || b == 0x65
          || b == 0x66 || b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3) {
         i++;
         if (i > 14) return C_NONE;
      } else break;
   }
   if ((p[i] & 0xF0) == 0x40) i++;   /* REX */
   op = p[i];
   if (op >= 0x70 && op <= 0x7F) return C_COND;
   if (op >= 0xE0 && op <= 0xE3) return C_COND;   /* loopne, loope, loop, jrcxz */
   if (op == 0x0F) return (p[i + 1] >= 0x80 && p[i + 1] <= 0x8F) ? C_COND : C_NONE;
   if (op == 0xE9 || op == 0xEB) return C_JUMP;
   if (op == 0xE8) return C_CALL;
   if (op == 0xC3 || op == 0xC2) return C_RET;
   if (op == 0xFF) {
      modrm = (p[i + 1] >> 3) & 7;
      if (modrm == 2 || modrm == 3) return C_CALL;
      if (modrm == 4 || modrm == 5) return C_IJUMP;
   }
   return C_NONE;
}

/* ---- IR building ---- */
typedef struct {
   IRSB* sb;
   IRTemp ptr;      /* current buffer pointer (temporary): the pc column */
   IRTemp kind_delta;  /* kind column address - (ptr >> 3) */
   IRTemp icount0;  /* icount at entry */
} Gen;

static IRTemp assign(Gen* g, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(g->sb->tyenv, ty);
   addStmtToIRSB(g->sb, IRStmt_WrTmp(t, e));
   return t;
}

static IRExpr* at(Gen* g, Int off)
{
   return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(g->ptr),
                                                       IRExpr_Const(IRConst_U64(off)))));
}

/* Store one record at ptr's slot of each column and advance ptr (only when
   `guard` holds, if given). `kind` is either a constant (kind_e NULL) or an
   I64 expression. */
static void emit_record(Gen* g, IRExpr* pc, IRExpr* addr, IRExpr* value,
                        Int kind, Int size, IRExpr* kind_e, IRExpr* guard)
{
   IRExpr* kind8 = kind_e ? IRExpr_RdTmp(assign(g, Ity_I8, IRExpr_Unop(Iop_64to8, kind_e)))
                          : IRExpr_Const(IRConst_U8((UChar)kind));
   IRTemp index = assign(g, Ity_I64, IRExpr_Binop(Iop_Shr64, IRExpr_RdTmp(g->ptr),
                                                  IRExpr_Const(IRConst_U8(3))));
   IRTemp kind_at = assign(g, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(index),
                                                    IRExpr_RdTmp(g->kind_delta)));
   IRTemp size_at = assign(g, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(kind_at),
                                                    IRExpr_Const(IRConst_U64(clo_block))));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(g->ptr), pc));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, at(g, 8 * clo_block), addr));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, at(g, 16 * clo_block), value));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(kind_at), kind8));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(size_at),
                                     IRExpr_Const(IRConst_U8((UChar)size))));
   IRExpr* next = at(g, STEP);
   if (guard)
      next = IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_ITE(guard, next, IRExpr_RdTmp(g->ptr))));
   g->ptr = assign(g, Ity_I64, next);
}

static void store_state(Gen* g, Int n_instrs)
{
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, IRExpr_Const(IRConst_U64((ULong)(Addr)&buf_ptr)),
                                     IRExpr_RdTmp(g->ptr)));
   IRTemp ic = assign(g, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(g->icount0),
                                              IRExpr_Const(IRConst_U64(n_instrs))));
   addStmtToIRSB(g->sb, IRStmt_Store(Iend_LE, IRExpr_Const(IRConst_U64((ULong)(Addr)&icount)),
                                     IRExpr_RdTmp(ic)));
}

static IRExpr* u64(ULong v) { return IRExpr_Const(IRConst_U64(v)); }

/* The value of temporary t (type ty) zero-extended to I64; NULL if not handled. */
static IRExpr* widen(Gen* g, IRType ty, IRTemp t)
{
   IRExpr* e = IRExpr_RdTmp(t);
   switch (ty) {
   case Ity_I8: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_8Uto64, e)));
   case Ity_I16: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_16Uto64, e)));
   case Ity_I32: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_32Uto64, e)));
   case Ity_I64: return e;
   case Ity_F64: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_ReinterpF64asI64, e)));
   case Ity_D64: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_ReinterpD64asI64, e)));
   case Ity_F32: {
      IRTemp i = assign(g, Ity_I32, IRExpr_Unop(Iop_ReinterpF32asI32, e));
      return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_32Uto64, IRExpr_RdTmp(i))));
   }
   case Ity_I128: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_128to64, e)));
   case Ity_V128: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_V128to64, e)));
   case Ity_V256: return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_V256to64_0, e)));
   default: return NULL;
   }
}

/* The first min(size, 8) bytes at addr, zero-extended (a guarded load). */
static IRExpr* reload(Gen* g, IRExpr* addr, Int size, IRExpr* guard)
{
   IRLoadGOp op;
   IRTemp dst;
   if (size >= 8) {
      dst = newIRTemp(g->sb->tyenv, Ity_I64);
      op = ILGop_Ident64;
      addStmtToIRSB(g->sb, IRStmt_LoadG(Iend_LE, op, dst, addr, u64(0),
                                        guard ? guard : IRExpr_Const(IRConst_U1(True))));
      return IRExpr_RdTmp(dst);
   }
   op = size >= 4 ? ILGop_Ident32 : size >= 2 ? ILGop_16Uto32 : ILGop_8Uto32;
   dst = newIRTemp(g->sb->tyenv, Ity_I32);
   addStmtToIRSB(g->sb, IRStmt_LoadG(Iend_LE, op, dst, addr, IRExpr_Const(IRConst_U32(0)),
                                     guard ? guard : IRExpr_Const(IRConst_U1(True))));
   return IRExpr_RdTmp(assign(g, Ity_I64, IRExpr_Unop(Iop_32Uto64, IRExpr_RdTmp(dst))));
}

static void emit_load(Gen* g, Addr pc, IRExpr* addr, IRType ty, IRTemp t, Int size,
                      IRExpr* guard)
{
   IRExpr* v = t != IRTemp_INVALID ? widen(g, ty, t) : NULL;
   if (v == NULL)
      v = reload(g, addr, size, guard);
   emit_record(g, u64(pc), addr, v, K_LOAD, size > 255 ? 255 : size, NULL, guard);
}

static Int transfer_kind(Int cls, Bool const_target)
{
   switch (cls) {
   case C_JUMP: return const_target ? K_JUMP : K_INDIRECT;
   case C_IJUMP: return K_INDIRECT;
   case C_CALL: return K_CALL;
   case C_RET: return K_RETURN;
   default: return -1;
   }
}

/* A control transfer record of instruction (pc, len) to target `dst`. */
static void emit_transfer(Gen* g, Int cls, Addr pc, Int len, IRExpr* dst, IRExpr* guard)
{
   ULong fall = (ULong)pc + len;
   if (cls == C_COND) {
      if (dst->tag == Iex_Const) {
         Int k = dst->Iex.Const.con->Ico.U64 == fall ? K_NOT_TAKEN : K_TAKEN;
         emit_record(g, u64(pc), dst, u64(fall), k, 0, NULL, guard);
      } else {
         IRTemp eq = assign(g, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, dst, u64(fall)));
         IRTemp k = assign(g, Ity_I64, IRExpr_ITE(IRExpr_RdTmp(eq), u64(K_NOT_TAKEN),
                                                  u64(K_TAKEN)));
         emit_record(g, u64(pc), dst, u64(fall), 0, 0, IRExpr_RdTmp(k), guard);
      }
   } else {
      emit_record(g, u64(pc), dst, u64(fall), transfer_kind(cls, dst->tag == Iex_Const), 0,
                  NULL, guard);
   }
}

static Int load_size_of_dirty(const IRDirty* d)
{
   return (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) && d->mAddr ? d->mSize : 0;
}

/* Upper bound of the records one execution of `sb` can write. */
static Int count_records(IRSB* sb)
{
   Int i, n = clo_blocks ? 1 : 0;
   for (i = 0; i < sb->stmts_used; i++) {
      IRStmt* st = sb->stmts[i];
      switch (st->tag) {
      case Ist_IMark: n += 1; break;   /* a transfer of the previous instruction */
      case Ist_Exit: n += 1; break;
      case Ist_WrTmp: if (st->Ist.WrTmp.data->tag == Iex_Load) n++; break;
      case Ist_LoadG: case Ist_CAS: case Ist_LLSC: n++; break;
      case Ist_Dirty: if (load_size_of_dirty(st->Ist.Dirty.details)) n++; break;
      default: break;
      }
   }
   return n + 1;
}

/* Loads of the current instruction: a locked read-modify-write (lock add,
   lock xadd, xchg with memory) is a load followed by a CAS whose expected
   value is that load's result, at the same address. The instruction reads
   memory once: the CAS is then not recorded again. */
#define MAX_INSN_LOADS 8
static IRTemp insn_load_tmp[MAX_INSN_LOADS];
static IRExpr* insn_load_addr[MAX_INSN_LOADS];
static Int n_insn_loads;

static Bool same_atom(const IRExpr* a, const IRExpr* b)
{
   if (a->tag != b->tag) return False;
   if (a->tag == Iex_RdTmp) return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
   if (a->tag == Iex_Const) return eqIRConst(a->Iex.Const.con, b->Iex.Const.con);
   return False;
}

static Bool cas_repeats_load(const IRCAS* cas)
{
   Int i;
   if (cas->dataHi != NULL || cas->expdLo->tag != Iex_RdTmp)
      return False;
   for (i = 0; i < n_insn_loads; i++)
      if (insn_load_tmp[i] == cas->expdLo->Iex.RdTmp.tmp && same_atom(insn_load_addr[i], cas->addr))
         return True;
   return False;
}

static IRSB* hw_instrument(VgCallbackClosure* closure, IRSB* sbIn,
                           const VexGuestLayout* layout, const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host, IRType gWordTy, IRType hWordTy)
{
   Gen g;
   Int i;
   Int n_instrs = 0, cls = C_NONE, ilen = 0;
   Addr ipc = 0;
   Bool cond_exit_seen = False;   /* the current conditional's exit was emitted */
   IRTemp worst_t, guard_t;

   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("hwprof: 64-bit guests only");

   g.sb = deepCopyIRSBExceptStmts(sbIn);
   i = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(g.sb, sbIn->stmts[i]);
      i++;
   }

   /* entry check: flush / skip / limit */
   {
      ULong worst = (ULong)count_records(sbIn) * STEP;
      IRTemp p = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&cur.ptr)));
      IRTemp lim = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                     u64((ULong)(Addr)&ptr_limit)));
      IRTemp ic = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&icount)));
      IRTemp sa = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&skip_at)));
      worst_t = assign(&g, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(p), u64(worst)));
      IRTemp full = assign(&g, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(lim),
                                                    IRExpr_RdTmp(worst_t)));
      IRTemp skip = assign(&g, Ity_I1, IRExpr_Binop(Iop_CmpLE64U, IRExpr_RdTmp(sa),
                                                    IRExpr_RdTmp(ic)));
      guard_t = assign(&g, Ity_I1, IRExpr_Binop(Iop_Or1, IRExpr_RdTmp(full),
                                                IRExpr_RdTmp(skip)));
      IRDirty* di = unsafeIRDirty_0_N(1, "entry_check", VG_(fnptr_to_fnentry)(&entry_check),
                                      mkIRExprVec_1(u64(worst)));
      di->guard = IRExpr_RdTmp(guard_t);
      /* it rewrites buf_ptr and kind_delta (adjacent): say so, so that no
         optimisation reuses the load above */
      di->mFx = Ifx_Modify;
      di->mAddr = u64((ULong)(Addr)&cur);
      di->mSize = sizeof cur;
      addStmtToIRSB(g.sb, IRStmt_Dirty(di));
      g.ptr = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&cur.ptr)));
      g.kind_delta = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                     u64((ULong)(Addr)&cur.kind_delta)));
      g.icount0 = assign(&g, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64,
                                                    u64((ULong)(Addr)&icount)));
   }
   if (clo_blocks && i < sbIn->stmts_used)
      emit_record(&g, u64(sbIn->stmts[i]->Ist.IMark.addr), u64(0), u64(0), K_BLOCK, 0,
                  NULL, NULL);

   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      switch (st->tag) {
      case Ist_IMark: {
         Addr next_pc = st->Ist.IMark.addr;
         /* control reached this IMark from the previous instruction without
            leaving: a transfer inside the superblock (chased or unrolled). */
         if (clo_branches && n_instrs > 0 && cls != C_NONE) {
            n_branch_mid++;
            emit_transfer(&g, cls, ipc, ilen, u64(next_pc), NULL);
         }
         addStmtToIRSB(g.sb, st);
         ipc = next_pc;
         ilen = st->Ist.IMark.len;
         cls = classify(ipc);
         cond_exit_seen = False;
         n_insn_loads = 0;
         n_instrs++;
         break;
      }
      case Ist_WrTmp: {
         IRExpr* e = st->Ist.WrTmp.data;
         addStmtToIRSB(g.sb, st);
         if (e->tag == Iex_Load && n_insn_loads < MAX_INSN_LOADS) {
            insn_load_tmp[n_insn_loads] = st->Ist.WrTmp.tmp;
            insn_load_addr[n_insn_loads++] = e->Iex.Load.addr;
         }
         if (clo_loads && e->tag == Iex_Load)
            emit_load(&g, ipc, e->Iex.Load.addr, e->Iex.Load.ty, st->Ist.WrTmp.tmp,
                      sizeofIRType(e->Iex.Load.ty), NULL);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* lg = st->Ist.LoadG.details;
         IRType ty, tyw;
         addStmtToIRSB(g.sb, st);
         if (clo_loads) {
            typeOfIRLoadGOp(lg->cvt, &tyw, &ty);
            /* dst holds the widened value; zero-extension of a sign-widened
               load needs the raw bytes */
            emit_load(&g, ipc, lg->addr, Ity_INVALID, IRTemp_INVALID, sizeofIRType(ty),
                      lg->guard);
         }
         break;
      }
      case Ist_CAS: {
         IRCAS* cas = st->Ist.CAS.details;
         IRType ty = typeOfIRExpr(g.sb->tyenv, cas->dataLo);
         Int size = sizeofIRType(ty) * (cas->dataHi ? 2 : 1);
         addStmtToIRSB(g.sb, st);
         if (clo_loads && !cas_repeats_load(cas))
            emit_load(&g, ipc, cas->addr, ty, cas->oldLo, size, NULL);
         break;
      }
      case Ist_LLSC: {
         addStmtToIRSB(g.sb, st);
         if (clo_loads && st->Ist.LLSC.storedata == NULL) {
            IRType ty = typeOfIRTemp(g.sb->tyenv, st->Ist.LLSC.result);
            emit_load(&g, ipc, st->Ist.LLSC.addr, ty, st->Ist.LLSC.result,
                      sizeofIRType(ty), NULL);
         }
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         Int size = load_size_of_dirty(d);
         if (clo_loads && size > 0)   /* value read before the helper runs */
            emit_load(&g, ipc, d->mAddr, Ity_INVALID, IRTemp_INVALID, size, d->guard);
         addStmtToIRSB(g.sb, st);
         break;
      }
      case Ist_Exit: {
         IRExpr* dst = IRExpr_Const(st->Ist.Exit.dst);
         if (clo_branches && cls == C_COND && st->Ist.Exit.jk == Ijk_Boring) {
            emit_transfer(&g, C_COND, ipc, ilen, dst, st->Ist.Exit.guard);
            cond_exit_seen = True;
         }
         store_state(&g, n_instrs);
         addStmtToIRSB(g.sb, st);
         break;
      }
      default:
         addStmtToIRSB(g.sb, st);
         break;
      }
   }

   /* superblock end: the last instruction's transfer goes to `next` */
   if (clo_branches && n_instrs > 0 && cls != C_NONE
       && (cls != C_COND || cond_exit_seen || g.sb->jumpkind == Ijk_Boring)) {
      Int jk = g.sb->jumpkind;
      if (jk == Ijk_Boring || jk == Ijk_Call || jk == Ijk_Ret)
         emit_transfer(&g, cls, ipc, ilen, g.sb->next, NULL);
   }
   store_state(&g, n_instrs);
   (void)worst_t;
   return g.sb;
}

/* ---- fork ---- */
static void atfork_child(ThreadId tid)
{
   disabled = True;
   finished = True;   /* the child writes no statistics */
   if (out_fd >= 0)
      VG_(close)(out_fd);
   if (ack_fd >= 0)
      VG_(close)(ack_fd);
   out_fd = ack_fd = -1;
   use_private_block();   /* the shared blocks belong to the parent */
   ptr_limit = buf_end;
   skip_at = ~0ULL;
}

/* ---- exec: the process image (and our buffer) is about to be replaced ---- */
static Bool exec_pending;

static void flush_for_exec(void)
{
   ULong used;
   if (disabled || out_fd < 0 || skipping)
      return;
   used = (buf_ptr - (ULong)(Addr)buf) / STEP;
   if (clo_limit >= 0 && written + used > (ULong)clo_limit)
      used = clo_limit - written;
   emit_block(used);
   written += used;
   buf_ptr = (ULong)(Addr)buf;
   set_limits();
}

static void hw_pre_syscall(ThreadId tid, UInt no, UWord* args, UInt nArgs)
{
   if (no == __NR_execve || no == __NR_execveat) {
      /* the new image runs without the tool (--trace-children=no): keep what
         we have; if the exec fails we carry on (see post) */
      flush_for_exec();
      write_stats(0, False);
      exec_pending = True;
   }
}

static void hw_post_syscall(ThreadId tid, UInt no, UWord* args, UInt nArgs, SysRes res)
{
   if (exec_pending) {   /* only reached when the exec failed */
      exec_pending = False;
      finished = False;
   }
}

/* ---- setup ---- */
static Bool hw_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--out-file", clo_out) {}
   else if VG_STR_CLO(arg, "--stats-file", clo_stats) {}
   else if VG_BOOL_CLO(arg, "--trace-loads", clo_loads) {}
   else if VG_BOOL_CLO(arg, "--trace-branches", clo_branches) {}
   else if VG_BOOL_CLO(arg, "--trace-blocks", clo_blocks) {}
   else if VG_BINT_CLO(arg, "--skip-instrs", clo_skip, 0, 0x7FFFFFFFFFFFFFFFLL) {}
   else if VG_BINT_CLO(arg, "--limit-records", clo_limit, -1, 0x7FFFFFFFFFFFFFFFLL) {}
   else if VG_BINT_CLO(arg, "--block-records", clo_block, 1024, 1 << 24) {}
   else if VG_BINT_CLO(arg, "--shm-fd", clo_shm_fd, -1, 1 << 20) {}
   else if VG_BINT_CLO(arg, "--shm-blocks", clo_shm_blocks, 1, MAX_SHM_BLOCKS) {}
   else if VG_BINT_CLO(arg, "--ack-fd", clo_ack_fd, -1, 1 << 20) {}
   else return False;
   return True;
}

static void hw_print_usage(void)
{
   VG_(printf)(
"    --out-file=PATH         where the binary records go (required)\n"
"    --stats-file=PATH       JSON statistics written at the end\n"
"    --trace-loads=yes|no    record loads [yes]\n"
"    --trace-branches=yes|no record control transfers [yes]\n"
"    --trace-blocks=yes|no   record superblock entries [no]\n"
"    --skip-instrs=N         record nothing for the first N guest instructions [0]\n"
"    --limit-records=N       stop the program after N records [-1: no limit]\n"
"    --block-records=C       records per block, a multiple of 8 [1048576]\n"
"    --shm-fd=F              fill blocks in the shared memory file F [-1: none]\n"
"    --shm-blocks=S          blocks in F (1..255) [4]\n"
"    --ack-fd=A              pipe on which the reader releases blocks [-1: none]\n");
}

static void hw_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

static void bad_option(const HChar* what)
{
   VG_(fmsg)("hwprof: %s\n", what);
   VG_(exit)(2);
}

static void hw_post_clo_init(void)
{
   SysRes sr;
   if (clo_out == NULL)
      bad_option("hwprof needs --out-file=PATH");
   /* one record sequence per branch: no chasing, no unrolling */
   VG_(clo_vex_control).guest_chase = False;
   VG_(clo_vex_control).iropt_unroll_thresh = 0;

   sr = VG_(open)(clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
   if (sr_isError(sr)) {
      VG_(fmsg)("hwprof: cannot open --out-file %s\n", clo_out);
      VG_(exit)(2);
   }
   out_fd = VG_(safe_fd)(sr_Res(sr));
   if (clo_block % 8)
      bad_option("--block-records must be a multiple of 8");
   if ((clo_shm_fd >= 0) != (clo_ack_fd >= 0))
      bad_option("--shm-fd and --ack-fd go together");
   if (clo_shm_fd >= 0) {
      Int i;
      sr = VG_(am_shared_mmap_file_float_valgrind)(26 * (SizeT)clo_block * clo_shm_blocks,
                                                   VKI_PROT_READ | VKI_PROT_WRITE,
                                                   clo_shm_fd, 0);
      if (sr_isError(sr)) {
         VG_(fmsg)("hwprof: cannot map --shm-fd %lld\n", clo_shm_fd);
         VG_(exit)(2);
      }
      shm_base = (UChar*)sr_Res(sr);
      VG_(close)(clo_shm_fd);   /* the mapping stays; the program must not see the fd */
      ack_fd = VG_(safe_fd)(clo_ack_fd);
      for (i = clo_shm_blocks - 1; i >= 1; i--)
         free_blocks[n_free++] = (UChar)i;
      use_block(shm_base);
   } else {
      use_block(VG_(malloc)("hwprof.block", 26 * (SizeT)clo_block));
   }
   skipping = clo_skip > 0;
   set_limits();
   VG_(atfork)(NULL, NULL, atfork_child);
}

static void hw_fini(Int exitcode)
{
   ULong used;
   if (disabled || out_fd < 0)
      return;
   if (!skipping) {
      used = (buf_ptr - (ULong)(Addr)buf) / STEP;
      if (clo_limit >= 0 && written + used > (ULong)clo_limit)
         used = clo_limit - written;
      emit_block(used);
      written += used;
   } else {
      skipped_instrs = icount;
   }
   VG_(close)(out_fd);
   out_fd = -1;
   if (ack_fd >= 0)
      VG_(close)(ack_fd);
   ack_fd = -1;
   write_stats(exitcode, False);
}

static void hw_pre_clo_init(void)
{
   VG_(details_name)("hwprof");
   VG_(details_version)("1");
   VG_(details_description)("hwprof load-value and branch tracer");
   VG_(details_copyright_author)("hwprof authors (BSD-2-Clause)");
   VG_(details_bug_reports_to)("the hwprof issue tracker");
   VG_(details_avg_translation_sizeB)(600);

   VG_(basic_tool_funcs)(hw_post_clo_init, hw_instrument, hw_fini);
   VG_(needs_command_line_options)(hw_process_cmd_line_option, hw_print_usage,
                                   hw_print_debug_usage);
   VG_(needs_syscall_wrapper)(hw_pre_syscall, hw_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(hw_pre_clo_init)
