/* A plain reference counter for scripts/bench.sh: the number of N-Queens solutions by
 * recursive bitmask depth-first search, with the left-right mirror symmetry (only the left
 * half of the first row is searched, and doubled), on pthreads that take first-row columns
 * from a shared counter. Nothing clever on purpose: it is the yardstick, not a contender.
 *
 * usage: baseline_mirror N [THREADS]     (1 <= N <= 32; THREADS defaults to 1)
 * build: cc -O3 -march=native -pthread -o baseline_mirror baseline_mirror.c
 *
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int n;
static uint32_t full;                /* the n low bits: every column */
static atomic_int next_column;       /* the next first-row column to hand out */
static unsigned long long weighted[32]; /* solutions under each first-row column, weighted */

/* Completions of the rows below, given the attacked columns and diagonals. */
static unsigned long long solve(uint32_t cols, uint32_t left, uint32_t right) {
    if (cols == full) return 1;
    unsigned long long count = 0;
    uint32_t free = full & ~(cols | left | right);
    while (free) {
        uint32_t bit = free & -free;
        free ^= bit;
        count += solve(cols | bit, (left | bit) << 1, (right | bit) >> 1);
    }
    return count;
}

/* Worker: first-row columns left of the middle count twice (their mirror images),
 * the middle column of an odd board once. */
static void *worker(void *unused) {
    (void)unused;
    int c;
    while ((c = atomic_fetch_add(&next_column, 1)) < (n + 1) / 2) {
        uint32_t bit = 1u << c;
        unsigned long long k = solve(bit, bit << 1, bit >> 1);
        weighted[c] = (n % 2 == 1 && c == n / 2) ? k : 2 * k;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s N [THREADS]\n", argv[0]);
        return 2;
    }
    n = atoi(argv[1]);
    int threads = argc == 3 ? atoi(argv[2]) : 1;
    if (n < 1 || n > 32 || threads < 1 || threads > 1024) {
        fprintf(stderr, "%s: need 1 <= N <= 32 and 1 <= THREADS <= 1024\n", argv[0]);
        return 2;
    }
    full = n == 32 ? UINT32_MAX : (1u << n) - 1;
    pthread_t pool[1024];
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&pool[t], NULL, worker, NULL) != 0) {
            fprintf(stderr, "%s: cannot start thread %d\n", argv[0], t);
            return 1;
        }
    }
    for (int t = 0; t < threads; t++) pthread_join(pool[t], NULL);
    unsigned long long total = 0;
    for (int c = 0; c < (n + 1) / 2; c++) total += weighted[c];
    printf("%llu\n", total);
    return 0;
}
