/* The spawn floor without an interpreter: run AGENT COUNT times, CONCURRENCY at a time (one
 * thread each), each in a new session with "prompt" on its stdin and its stdout read to end of
 * file, then reaped -- what knowmeter's run_command does for one task. Prints the parent's CPU
 * seconds (user, system) and wall seconds. Built and run by bench/bench_spawn_cost.py. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static const char *agent;
static int total, next_index;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int take(void) {
    pthread_mutex_lock(&lock);
    int i = next_index++;
    pthread_mutex_unlock(&lock);
    return i;
}

static void run_one(void) {
    char buf[65536];
    int in[2], out[2];
    if (pipe(in) || pipe(out)) exit(2);
    if (write(in[1], "prompt", 6) != 6) exit(2);
    close(in[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    char *argv[] = {(char *)agent, NULL};
    pid_t pid;
    if (posix_spawn(&pid, agent, &actions, &attr, argv, environ)) exit(2);
    close(in[0]);
    close(out[1]);
    while (read(out[0], buf, sizeof buf) > 0) {
    }
    close(out[0]);
    int status;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
}

static void *worker(void *unused) {
    (void)unused;
    while (take() < total) run_one();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: spawn_floor AGENT COUNT CONCURRENCY\n");
        return 2;
    }
    agent = argv[1];
    total = atoi(argv[2]);
    int concurrency = atoi(argv[3]);
    pthread_t threads[256];
    if (concurrency < 1 || concurrency > 256) return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < concurrency; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < concurrency; i++) pthread_join(threads[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    printf("%.6f %.6f %.6f\n", self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6,
           self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6,
           (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
