/* A workload of some substance, profiled by brr-sampled function-entry counters.
 *
 * It builds a text of pseudo-random words, compresses it with an LZ77 coder (hash
 * chains), decompresses and verifies it, checksums it (CRC-32) and sorts its words
 * (quicksort), printing the results. Every function starts with a profiling site (the
 * paper's method execution frequency profile, Lee & Zilles sec. 5.2): one brr at
 * SAMPLE_FREQ whose taken path (out of line) increments the function's sampled counter.
 * With -DFULL_PROFILE each site also counts every execution (the full profile).
 *
 * Built three ways:
 *   on the system:                each site is one brr (hwprof.h)
 *   -DNEVER_TAKEN on the system:  every site's sample path is never taken (constant 0)
 *   -DHWPROF_HOST for the host:   the same, with stdio for the console
 * The last two must print the same text.
 *
 * Each site's brr address and id are put in the section hwprof_sites and printed at
 * the end ("site ID PC"), so that the simulation's brr log maps to functions. */
#ifdef HWPROF_HOST
#include <stdint.h>
#include <stdio.h>
static void hwprof_putc(int c) { putchar(c); }
static void hwprof_puts(const char *s) { fputs(s, stdout); }
static void hwprof_puthex(uint32_t v) { printf("%08x", (unsigned)v); }
#ifndef NEVER_TAKEN
#define NEVER_TAKEN 1
#endif
#else
#include "hwprof.h"
#endif

#ifndef SAMPLE_FREQ
#define SAMPLE_FREQ 5
#endif
#ifndef TEXT
#define TEXT 6000
#endif

enum { S_RAND, S_WORD, S_TEXT, S_HASH, S_MATCH, S_LITERAL, S_EMITMATCH, S_COMPRESS,
       S_DECOMPRESS, S_COPY, S_CRC, S_CMP, S_PARTITION, S_SORT, S_SWAP, NSITES };

static uint32_t sampled[NSITES];
#ifdef FULL_PROFILE
static uint32_t full[NSITES];
#define COUNT_FULL(id) (full[id]++)
#else
#define COUNT_FULL(id) ((void)0)
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

#ifdef NEVER_TAKEN
#define SITE(id)                                                                         \
    do {                                                                                 \
        COUNT_FULL(id);                                                                  \
        if (0) sampled[id]++;                                                            \
    } while (0)
#else
/* one brr; its address and the site id are recorded in section hwprof_sites */
#define SITE(id)                                                                         \
    do {                                                                                 \
        COUNT_FULL(id);                                                                  \
        __asm__ goto("1: .insn b 0x0b, 0, x0, x" STR(SAMPLE_FREQ) ", %l[taken]\n"         \
                     ".pushsection hwprof_sites, \"a\"\n.word 1b, %0\n.popsection"        \
                     : : "i"(id) : : taken);                                             \
        break;                                                                           \
    taken:                                                                               \
        sampled[id]++;                                                                   \
    } while (0)
#endif

#define NOINLINE __attribute__((noinline))

static uint8_t text[TEXT], packed[2 * TEXT], unpacked[TEXT];
static uint32_t seed = 2463534242u;

NOINLINE static uint32_t rnd(void) {
    SITE(S_RAND);
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
}

static const char *const dictionary[] = {
    "branch", "on", "random", "sample", "profile", "the", "of", "a", "counter", "site",
    "instruction", "hardware", "overhead", "cycle", "lfsr", "taken", "rate", "loop"};
#define WORDS (sizeof dictionary / sizeof dictionary[0])

NOINLINE static int put_word(int at) {
    SITE(S_WORD);
    /* skewed: low indices far more often (a Zipf-like text) */
    uint32_t r = rnd();
    unsigned w = (r & 7) < 5 ? (r >> 3) % 4 : (r >> 3) % WORDS;
    for (const char *p = dictionary[w]; *p && at < TEXT; p++) text[at++] = (uint8_t)*p;
    if (at < TEXT) text[at++] = (r >> 20) % 8 ? ' ' : '\n';
    return at;
}

NOINLINE static void make_text(void) {
    SITE(S_TEXT);
    for (int at = 0; at < TEXT;) at = put_word(at);
}

/* --- LZ77 with hash chains: tokens 0LLLLLLL literals..., 1LLLLLLL DDDDDDDD DDDDDDDD -- */
#define HBITS 10
#define WINDOW 4096
#define MINMATCH 4
#define MAXMATCH 130
static int16_t head[1 << HBITS], chain[TEXT];

NOINLINE static unsigned hash4(const uint8_t *p) {
    SITE(S_HASH);
    uint32_t v = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    return (v * 2654435761u) >> (32 - HBITS);
}

NOINLINE static int longest_match(int at, int *distance) {
    SITE(S_MATCH);
    int best = 0, tries = 16;
    for (int cand = head[hash4(text + at)]; cand >= 0 && tries--; cand = chain[cand]) {
        if (at - cand > WINDOW) break;
        int len = 0;
        while (at + len < TEXT && len < MAXMATCH && text[cand + len] == text[at + len]) len++;
        if (len > best) {
            best = len;
            *distance = at - cand;
        }
    }
    return best;
}

NOINLINE static int emit_literals(int out, int from, int count) {
    SITE(S_LITERAL);
    while (count > 0) {
        int n = count > 127 ? 127 : count;
        packed[out++] = (uint8_t)n;
        for (int i = 0; i < n; i++) packed[out++] = text[from++];
        count -= n;
    }
    return out;
}

NOINLINE static int emit_match(int out, int len, int distance) {
    SITE(S_EMITMATCH);
    packed[out++] = (uint8_t)(0x80 | (len - MINMATCH + 1));
    packed[out++] = (uint8_t)distance;
    packed[out++] = (uint8_t)(distance >> 8);
    return out;
}

NOINLINE static int compress(void) {
    SITE(S_COMPRESS);
    for (int i = 0; i < (1 << HBITS); i++) head[i] = -1;
    int out = 0, literal = 0, at = 0;
    while (at < TEXT) {
        int distance = 0, len = at + MINMATCH <= TEXT ? longest_match(at, &distance) : 0;
        if (len >= MINMATCH) {
            out = emit_literals(out, literal, at - literal);
            out = emit_match(out, len, distance);
        } else {
            len = 1;
        }
        for (int k = 0; k < len; k++, at++) {
            if (at + MINMATCH <= TEXT) {
                unsigned h = hash4(text + at);
                chain[at] = head[h];
                head[h] = (int16_t)at;
            }
        }
        if (len >= MINMATCH) literal = at;
    }
    return emit_literals(out, literal, at - literal);
}

NOINLINE static int copy_match(int at, int len, int distance) {
    SITE(S_COPY);
    for (int i = 0; i < len; i++, at++) unpacked[at] = unpacked[at - distance];
    return at;
}

NOINLINE static int decompress(int size) {
    SITE(S_DECOMPRESS);
    int at = 0;
    for (int in = 0; in < size;) {
        int token = packed[in++];
        if (token & 0x80) {
            int distance = packed[in] | packed[in + 1] << 8;
            in += 2;
            at = copy_match(at, (token & 0x7f) + MINMATCH - 1, distance);
        } else {
            for (int i = 0; i < token; i++) unpacked[at++] = packed[in++];
        }
    }
    return at;
}

NOINLINE static uint32_t crc32(const uint8_t *p, int n) {
    SITE(S_CRC);
    uint32_t crc = 0xFFFFFFFFu;
    for (int i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = crc >> 1 ^ (0xEDB88320u & -(crc & 1));
    }
    return ~crc;
}

/* --- quicksort of the text's words (offsets), by their letters -------------------- */
#define MAXWORDS 2048
static int16_t words[MAXWORDS];

NOINLINE static int compare(int a, int b) {
    SITE(S_CMP);
    for (;; a++, b++) {
        int ca = a < TEXT && text[a] > ' ' ? text[a] : 0;
        int cb = b < TEXT && text[b] > ' ' ? text[b] : 0;
        if (ca != cb || !ca) return ca - cb;
    }
}

NOINLINE static void swap(int i, int j) {
    SITE(S_SWAP);
    int16_t t = words[i];
    words[i] = words[j];
    words[j] = t;
}

NOINLINE static int partition(int lo, int hi) {
    SITE(S_PARTITION);
    swap((lo + hi) / 2, hi);
    int store = lo;
    for (int i = lo; i < hi; i++)
        if (compare(words[i], words[hi]) < 0) swap(i, store++);
    swap(store, hi);
    return store;
}

NOINLINE static void sort(int lo, int hi) {
    SITE(S_SORT);
    while (lo < hi) {
        int p = partition(lo, hi);
        if (p - lo < hi - p) {
            sort(lo, p - 1);
            lo = p + 1;
        } else {
            sort(p + 1, hi);
            hi = p - 1;
        }
    }
}

static void put(const char *label, uint32_t value) {
    hwprof_puts(label);
    hwprof_putc(' ');
    hwprof_puthex(value);
    hwprof_putc('\n');
}

#ifndef NEVER_TAKEN
extern const uint32_t __start_hwprof_sites[], __stop_hwprof_sites[];
#endif

int main(void) {
    make_text();
    int size = compress();
    int restored = decompress(size);
    int same = restored == TEXT;
    for (int i = 0; same && i < TEXT; i++) same = unpacked[i] == text[i];
    put("text", TEXT);
    put("compressed", (uint32_t)size);
    put("roundtrip", (uint32_t)same);
    put("crc", crc32(text, TEXT));
    int n = 0;
    for (int i = 0; i < TEXT && n < MAXWORDS; i++)
        if (text[i] > ' ' && (i == 0 || text[i - 1] <= ' ')) words[n++] = (int16_t)i;
    sort(0, n - 1);
    uint32_t order = 0;
    for (int i = 0; i < n; i++) order = order * 31 + (uint32_t)words[i];
    put("words", (uint32_t)n);
    put("first", (uint32_t)words[0]);
    put("order", order);
    for (int s = 0; s < NSITES; s++) {
        hwprof_puts("sampled ");
        hwprof_puthex((uint32_t)s);
        hwprof_putc(' ');
        hwprof_puthex(sampled[s]);
        hwprof_putc('\n');
    }
#ifdef FULL_PROFILE
    for (int s = 0; s < NSITES; s++) {
        hwprof_puts("full ");
        hwprof_puthex((uint32_t)s);
        hwprof_putc(' ');
        hwprof_puthex(full[s]);
        hwprof_putc('\n');
    }
#endif
#ifndef NEVER_TAKEN
    for (const uint32_t *p = __start_hwprof_sites; p < __stop_hwprof_sites; p += 2) {
        hwprof_puts("site ");
        hwprof_puthex(p[1]);
        hwprof_putc(' ');
        hwprof_puthex(p[0]);
        hwprof_putc('\n');
    }
#endif
    return same ? 0 : 1;
}
