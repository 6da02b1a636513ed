// What a machine's cores charge for talking to each other, the two costs the simulation's
// one-node topologies need from real hardware:
//
//   line  A  B  NS   one cache line bouncing between PUs A and B: the round-trip time of a
//                    store on A seen by B and answered (a message's hand-off between two
//                    spinning workers), median of 7 samples of 2,000 round trips;
//   wake  A  B  NS   a thread on B asleep in futex_wait, woken by A, waking A in turn: the
//                    time per wake-up (half a round trip), what a parked worker costs the
//                    message that wakes it, median of 7 samples of 200 round trips.
//
// Every ordered pair of the PUs this process may run on is measured for `line`, a few pairs
// for `wake` (the first PU with its neighbour, the middle one and the last one). Output: one
// tab-separated line per measurement, then `summary` lines (min, median, max over the pairs).
//
//   cc -O2 -pthread -o core_latency docs/results/core_latency.c && ./core_latency
//
// Linux only (futex, sched_setaffinity). No argument; exit 1 when a PU cannot be pinned.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES 7
#define LINE_ROUNDS 2000
#define WAKE_ROUNDS 200

// One line per shared word, so the probe measures one line's travel and nothing beside it.
struct shared {
    _Alignas(64) _Atomic uint32_t word;
    _Alignas(64) _Atomic uint32_t ready;
};

struct job {
    struct shared *s;
    int cpu;
    int rounds;
    int wake; // 0: spin on the line; 1: sleep in futex_wait
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static void futex_wait(_Atomic uint32_t *w, uint32_t seen) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

// The answering side: waits for an odd value, answers with the next even one.
static void *answer(void *arg) {
    struct job *j = arg;
    if (pin(j->cpu) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
    atomic_store(&j->s->ready, 1);
    for (uint32_t i = 1; i < 2u * (uint32_t)j->rounds * SAMPLES; i += 2) {
        uint32_t v;
        while ((v = atomic_load_explicit(&j->s->word, memory_order_acquire)) != i) {
            if (j->wake)
                futex_wait(&j->s->word, v);
        }
        atomic_store_explicit(&j->s->word, i + 1, memory_order_release);
        if (j->wake)
            futex_wake(&j->s->word);
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Median over SAMPLES of the nanoseconds per round trip between `a` (this thread) and `b`.
static double measure(int a, int b, int wake) {
    int rounds = wake ? WAKE_ROUNDS : LINE_ROUNDS;
    struct shared *s = aligned_alloc(64, sizeof *s);
    atomic_store(&s->word, 0);
    atomic_store(&s->ready, 0);
    struct job j = {s, b, rounds, wake};
    if (pin(a) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
    pthread_t t;
    pthread_create(&t, NULL, answer, &j);
    while (!atomic_load(&s->ready))
        ;
    double per[SAMPLES];
    uint32_t i = 0;
    for (int k = 0; k < SAMPLES; k++) {
        uint64_t start = now_ns();
        for (int r = 0; r < rounds; r++) {
            atomic_store_explicit(&s->word, ++i, memory_order_release);
            if (wake)
                futex_wake(&s->word);
            uint32_t v;
            ++i;
            while ((v = atomic_load_explicit(&s->word, memory_order_acquire)) != i) {
                if (wake)
                    futex_wait(&s->word, v);
            }
        }
        per[k] = (double)(now_ns() - start) / rounds;
    }
    pthread_join(t, NULL);
    free(s);
    qsort(per, SAMPLES, sizeof per[0], cmp);
    return per[SAMPLES / 2];
}

static void summary(const char *what, double *v, int n) {
    qsort(v, n, sizeof v[0], cmp);
    printf("summary\t%s\tmin %.0f\tmedian %.0f\tmax %.0f\tpairs %d\n", what, v[0], v[n / 2],
           v[n - 1], n);
}

int main(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    if (n < 2) {
        fprintf(stderr, "core_latency: needs at least 2 PUs, this process may use %d\n", n);
        return 1;
    }
    double *lines = malloc(sizeof(double) * n * n);
    int m = 0;
    printf("# line A B ns-per-round-trip; wake A B ns-per-wake-up\n");
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            if (x == y)
                continue;
            double ns = measure(cpus[x], cpus[y], 0);
            printf("line\t%d\t%d\t%.0f\n", cpus[x], cpus[y], ns);
            lines[m++] = ns;
        }
    summary("line", lines, m);
    int partners[3] = {cpus[1], cpus[n / 2], cpus[n - 1]};
    double wakes[3];
    int w = 0;
    for (int k = 0; k < 3; k++) {
        if (k > 0 && partners[k] == partners[k - 1])
            continue;
        // Half a round trip: each round trip is two wake-ups.
        double ns = measure(cpus[0], partners[k], 1) / 2;
        printf("wake\t%d\t%d\t%.0f\n", cpus[0], partners[k], ns);
        wakes[w++] = ns;
    }
    summary("wake", wakes, w);
    free(lines);
    return 0;
}
