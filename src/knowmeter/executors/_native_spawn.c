/* knowmeter.executors._native_spawn: run commands from C worker threads, start to reap.
 *
 * The design is described in _spawn.py's docstring and design/decisions.md (issue 32). In short:
 * a Batch (one per event loop) hands each command to a worker thread of a process-wide pool; the
 * worker makes the pipes, prefills stdin, posix_spawn()s the command in a new session, then polls
 * stdout, a pidfd and (while some is pending) stdin until the command exited and stdout ended, or
 * until `grace` seconds after the exit (its process group is then killed). A finished command is
 * pushed onto the batch's completion list and the batch's eventfd is signalled; Python drains
 * every completion in one call. The workers never take the GIL: a command's strings and stdin are
 * copied into one allocation at submit, its stdout into a malloc'd buffer that drain() turns into
 * bytes.
 *
 * Linux with glibc >= 2.34 only (posix_spawn_file_actions_addchdir_np, ..._addclosefrom_np):
 * elsewhere the module compiles to one that raises ImportError, and Python uses its own path.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#if defined(__linux__) && defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#define KM_NATIVE 1
#endif
#endif

#ifdef KM_NATIVE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------------------------------------
 * Jobs and batches
 */

enum { QUEUED, RUNNING, DONE };

/* seconds after its start from which a command's exit is watched even while stdout is open */
#define WATCH_EXIT_AFTER_S 0.05

struct batch;

typedef struct job {
    struct job *next_queued; /* the pool's queue (pool.lock) */
    struct job *next_done;   /* the batch's completion list (batch lock) */
    struct job *prev, *next; /* the batch's jobs not yet drained (batch lock) */
    struct batch *batch;
    unsigned long long id;
    int state; /* QUEUED, RUNNING, DONE (pool.lock while QUEUED -> RUNNING) */
    /* what to run: all in `block` (one allocation) */
    char *block;
    char **argv;
    char **envp; /* NULL: the process's environment */
    char **exes; /* the paths to try in turn (PATH lookup), NULL-terminated */
    char *cwd;   /* NULL: the current directory */
    char *input;
    size_t input_len;
    int errfd;
    double grace;
    /* batch lock */
    pid_t pid;
    int killed;
    int reaped;
    /* the outcome, written by the worker before the job is completed */
    int code;
    int err;        /* errno of a start that failed (0: it started) */
    int err_at_cwd; /* the failure was the working directory's */
    int cancelled;  /* killed before it started: nothing ran */
    char *out;
    size_t out_len, out_cap;
    size_t out_limit; /* stdout kept: at most out_limit + 1 bytes (the rest is read and dropped) */
} job;

typedef struct batch {
    pthread_mutex_t lock;
    int efd;
    int closed; /* the Python object is gone: completed jobs free themselves */
    int refs;   /* jobs not freed + the Python object */
    pid_t owner;
    job *done; /* completed, not drained (newest first) */
    job *active;
    unsigned long long next_id;
} batch;

static void job_free(job *j) {
    if (j->errfd >= 0) close(j->errfd);
    free(j->out);
    free(j->block);
    free(j);
}

static void batch_release(batch *b) {
    /* call with b->lock not held, once per reference */
    pthread_mutex_lock(&b->lock);
    int last = --b->refs == 0;
    pthread_mutex_unlock(&b->lock);
    if (last) {
        close(b->efd);
        pthread_mutex_destroy(&b->lock);
        free(b);
    }
}

static void unlink_active(batch *b, job *j) {
    if (j->prev) j->prev->next = j->next;
    else b->active = j->next;
    if (j->next) j->next->prev = j->prev;
}

/* A job is finished (or was never started): hand it to the batch, or free it when the batch is
 * closed. Any thread. */
static void complete(job *j) {
    batch *b = j->batch;
    pthread_mutex_lock(&b->lock);
    j->state = DONE;
    if (b->closed) {
        unlink_active(b, j);
        pthread_mutex_unlock(&b->lock);
        job_free(j);
        batch_release(b);
        return;
    }
    int was_empty = b->done == NULL;
    j->next_done = b->done;
    b->done = j;
    pthread_mutex_unlock(&b->lock);
    if (was_empty) {
        uint64_t one = 1;
        ssize_t n = write(b->efd, &one, sizeof one);
        (void)n; /* EAGAIN: the counter is already signalled */
    }
}

/* ------------------------------------------------------------------------------------------------
 * The pool: threads made on demand up to max_threads, a queue past them; an idle thread exits
 * after idle_s seconds without work.
 */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    job *head, *tail;
    int queued;  /* jobs in the queue */
    int idle;    /* threads waiting for work */
    int threads; /* threads alive */
    int max_threads;
    double idle_s;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0, 512, 10.0};

/* the pool's condition waits on CLOCK_MONOTONIC (idle deadlines ignore changes of the date) */
static void init_wake(void) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&pool.wake, &attr);
    pthread_condattr_destroy(&attr);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run_job(job *j);

/* this worker runs as SCHED_BATCH: its commands are started with SCHED_OTHER (spawn()) */
static __thread int batch_policy;

static void *worker(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "knowmeter-spawn"); /* (15 characters: the kernel's limit) */
    /* SCHED_BATCH: a worker woken (a job, a child's output) does not preempt the thread running
     * on its CPU -- the event loop, or an agent -- but waits for its turn; each such preemption
     * cost the loop a context switch and a cold cache (issue 32, bench/bench_spawn_cost.py). Only
     * from the normal policy (a worker inherits its creator's); its commands get that one back. */
    int policy;
    struct sched_param param;
    if (pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_OTHER)
        batch_policy = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) == 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.head == NULL) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            double s = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + pool.idle_s;
            until.tv_sec = (time_t)s;
            until.tv_nsec = (long)((s - (double)until.tv_sec) * 1e9);
            pool.idle++;
            int rc = pthread_cond_timedwait(&pool.wake, &pool.lock, &until);
            pool.idle--;
            if (rc == ETIMEDOUT && pool.head == NULL) {
                pool.threads--;
                pthread_mutex_unlock(&pool.lock);
                return NULL;
            }
        }
        job *j = pool.head;
        pool.head = j->next_queued;
        if (pool.head == NULL) pool.tail = NULL;
        pool.queued--;
        j->state = RUNNING;
        pthread_mutex_unlock(&pool.lock);
        run_job(j);
        complete(j);
        pthread_mutex_lock(&pool.lock);
    }
}

/* Make a worker thread, all signals blocked in it (Python's main thread keeps SIGINT). Call with
 * pool.lock held. Returns 0 or an errno. */
static int add_thread(void) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, worker, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0) pool.threads++;
    return rc;
}

static void atfork_prepare(void) { pthread_mutex_lock(&pool.lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&pool.lock); }
static void atfork_child(void) {
    /* the parent's threads are not here: start with an empty pool (queued jobs are the parent's) */
    pthread_mutex_init(&pool.lock, NULL);
    init_wake();
    pool.head = pool.tail = NULL;
    pool.queued = pool.idle = pool.threads = 0;
}

/* ------------------------------------------------------------------------------------------------
 * One command, start to reap (in a worker thread)
 */

static int append_output(job *j, int fd) {
    /* read what is there; returns 1 at end of file (or on an error), 0 when it would block. Past
     * out_limit + 1 bytes the rest is read and dropped, so the command is never blocked on a full
     * pipe and its reply takes bounded memory */
    char drop[8192];
    for (;;) {
        char *into = drop;
        size_t room = sizeof drop;
        if (j->out_len <= j->out_limit) {
            if (j->out_cap - j->out_len < 8192) {
                size_t cap = j->out_cap ? j->out_cap * 2 : 32768;
                char *grown = realloc(j->out, cap);
                if (grown == NULL) return 1; /* out of memory: the reply is what was read */
                j->out = grown;
                j->out_cap = cap;
            }
            into = j->out + j->out_len;
            room = j->out_cap - j->out_len;
            if (room > j->out_limit + 1 - j->out_len) room = j->out_limit + 1 - j->out_len;
        }
        ssize_t n = read(fd, into, room);
        if (n > 0 && into == drop) continue;
        if (n > 0) {
            j->out_len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        return 1;
    }
}

/* write on to stdin; returns 1 when nothing is left to write (all written, or the child closed it) */
static int feed_input(job *j, int fd, size_t *written) {
    for (;;) {
        if (*written == j->input_len) return 1;
        ssize_t n = write(fd, j->input + *written, j->input_len - *written);
        if (n >= 0) {
            *written += (size_t)n;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return 0;
        if (errno == EPIPE) { /* the child closed its stdin: drop the rest, and the SIGPIPE kept pending */
            sigset_t pipe_only;
            sigemptyset(&pipe_only);
            sigaddset(&pipe_only, SIGPIPE);
            struct timespec zero = {0, 0};
            while (sigtimedwait(&pipe_only, NULL, &zero) == SIGPIPE) {
            }
        }
        return 1;
    }
}

static void close_fd(int *fd) {
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static int spawn(job *j, int in_r, int out_w, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_r, 0);
    posix_spawn_file_actions_adddup2(&actions, out_w, 1);
    posix_spawn_file_actions_adddup2(&actions, j->errfd, 2);
    if (j->cwd) posix_spawn_file_actions_addchdir_np(&actions, j->cwd);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_init(&attr);
    short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (batch_policy) { /* back to the policy the worker had (worker()) */
        struct sched_param none = {0};
        posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER);
        posix_spawnattr_setschedparam(&attr, &none);
        flags |= POSIX_SPAWN_SETSCHEDULER;
    }
    posix_spawnattr_setflags(&attr, flags);
    sigset_t set;
    sigemptyset(&set);
    posix_spawnattr_setsigmask(&attr, &set);
    sigaddset(&set, SIGPIPE); /* ignored by Python: back to the default, as subprocess's restore_signals */
    sigaddset(&set, SIGXFSZ);
    posix_spawnattr_setsigdefault(&attr, &set);
    /* no env given: the process's environment as it is now (Python changes it only with the GIL
     * held, through putenv, as subprocess's vfork start reads it too) */
    char **envp = j->envp ? j->envp : environ;
    int rc = ENOENT, first = 0;
    for (char **exe = j->exes; *exe; exe++) {
        if (exe[1] && (*exe)[0] == '/' && access(*exe, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
            rc = errno; /* not there: no process made to find out */
            continue;
        }
        rc = posix_spawn(pid, *exe, &actions, &attr, j->argv, envp);
        if (rc == 0) break;
        if (rc != ENOENT && rc != ENOTDIR && first == 0) first = rc; /* as subprocess reports it */
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) return 0;
    if (j->cwd) {
        struct stat st;
        if (stat(j->cwd, &st) != 0) {
            j->err_at_cwd = 1;
            return errno;
        }
        if (!S_ISDIR(st.st_mode)) {
            j->err_at_cwd = 1;
            return ENOTDIR;
        }
    }
    return first ? first : rc;
}

static int exit_code(int status) {
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

static void run_job(job *j) {
    batch *b = j->batch;
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    pthread_mutex_lock(&b->lock);
    int killed = j->killed;
    pthread_mutex_unlock(&b->lock);
    if (killed) {
        j->cancelled = 1;
        return;
    }
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
        j->err = errno;
        close_fd(&in[0]);
        close_fd(&in[1]);
        return;
    }
    size_t written = 0;
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    if (feed_input(j, in[1], &written)) close_fd(&in[1]);
    pid_t pid = 0;
    int rc = spawn(j, in[0], out[1], &pid);
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&j->errfd);
    if (rc != 0) {
        j->err = rc;
        close_fd(&in[1]);
        close_fd(&out[0]);
        return;
    }
    pthread_mutex_lock(&b->lock);
    j->pid = pid;
    killed = j->killed;
    pthread_mutex_unlock(&b->lock);
    if (killed) killpg(pid, SIGKILL); /* cancelled while it started */
    /* The exit is watched (a pidfd) only once stdout ended with stdin still being written, or the
     * command runs on WATCH_EXIT_AFTER_S: most commands end stdout and exit together, and are
     * then reaped at once (no pidfd, no wake-up more). */
    int pidfd = -1, exited = 0, status = 0;
    double started = now_s(), exited_at = 0;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    while (!exited || out[0] >= 0) {
        if (!exited && out[0] < 0 && in[1] < 0) { /* only the exit is left: wait for it here */
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            exited = 1;
            break;
        }
        int timeout = -1;
        if (exited) { /* stdout still open: what it left running holds it */
            double left = exited_at + j->grace - now_s();
            if (left <= 0) {
                killpg(pid, SIGKILL); /* the reply is complete; kill what it left running */
                break;
            }
            timeout = (int)(left * 1000) + 1;
        } else if (pidfd < 0) {
            double left = started + WATCH_EXIT_AFTER_S - now_s();
            if (left <= 0 || out[0] < 0) {
                pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
                if (pidfd < 0) timeout = 50; /* out of descriptors: look again later */
            } else
                timeout = (int)(left * 1000) + 1;
        }
        struct pollfd fds[3];
        int n = 0, at_out = -1, at_pid = -1, at_in = -1;
        if (out[0] >= 0) fds[at_out = n++] = (struct pollfd){out[0], POLLIN, 0};
        if (!exited && pidfd >= 0) fds[at_pid = n++] = (struct pollfd){pidfd, POLLIN, 0};
        if (in[1] >= 0) fds[at_in = n++] = (struct pollfd){in[1], POLLOUT, 0};
        if (poll(fds, (nfds_t)n, timeout) < 0) continue; /* EINTR (signals are blocked here anyway) */
        if (at_in >= 0 && fds[at_in].revents && feed_input(j, in[1], &written)) close_fd(&in[1]);
        if (at_out >= 0 && fds[at_out].revents && append_output(j, out[0])) close_fd(&out[0]);
        if (at_pid >= 0 && fds[at_pid].revents) {
            pid_t got;
            while ((got = waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
            }
            if (got == 0) continue; /* (not yet: cannot happen once the pidfd is readable) */
            if (got < 0) status = 0; /* reaped by someone else: as subprocess, exit code 0 */
            exited = 1;
            exited_at = now_s();
            pthread_mutex_lock(&b->lock);
            j->reaped = 1;
            pthread_mutex_unlock(&b->lock);
            close_fd(&in[1]); /* what it did not read is dropped */
        }
    }
    pthread_mutex_lock(&b->lock);
    j->reaped = 1;
    pthread_mutex_unlock(&b->lock);
    close_fd(&pidfd);
    close_fd(&in[1]);
    close_fd(&out[0]);
    j->code = exit_code(status);
}

/* ------------------------------------------------------------------------------------------------
 * Submitting: the command's strings copied into one block
 */

typedef struct {
    PyObject **items; /* bytes objects */
    Py_ssize_t count;
    size_t bytes; /* their lengths + NULs */
} strings;

static void strings_clear(strings *s) {
    for (Py_ssize_t i = 0; i < s->count; i++) Py_XDECREF(s->items[i]);
    PyMem_Free(s->items);
    s->items = NULL;
    s->count = 0;
}

static int strings_add(strings *s, PyObject *encoded) {
    /* takes the reference to `encoded` (bytes) */
    if ((Py_ssize_t)strlen(PyBytes_AS_STRING(encoded)) != PyBytes_GET_SIZE(encoded)) {
        Py_DECREF(encoded);
        PyErr_SetString(PyExc_ValueError, "embedded null byte");
        return -1;
    }
    PyObject **grown = PyMem_Realloc(s->items, sizeof(PyObject *) * (size_t)(s->count + 1));
    if (grown == NULL) {
        Py_DECREF(encoded);
        PyErr_NoMemory();
        return -1;
    }
    s->items = grown;
    s->items[s->count++] = encoded;
    s->bytes += (size_t)PyBytes_GET_SIZE(encoded) + 1;
    return 0;
}

static int strings_add_path(strings *s, PyObject *value) {
    PyObject *encoded = NULL;
    if (!PyUnicode_FSConverter(value, &encoded)) return -1;
    return strings_add(s, encoded);
}

static int strings_from_sequence(strings *s, PyObject *seq, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (strings_add_path(s, PySequence_Fast_GET_ITEM(fast, i)) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static int env_entry(strings *s, PyObject *key, PyObject *value) {
    PyObject *k = NULL, *v = NULL;
    if (!PyUnicode_FSConverter(key, &k)) return -1;
    if (!PyUnicode_FSConverter(value, &v)) {
        Py_DECREF(k);
        return -1;
    }
    const char *kk = PyBytes_AS_STRING(k);
    if (kk[0] == '\0' || strchr(kk + 1, '=') != NULL) {
        Py_DECREF(k);
        Py_DECREF(v);
        PyErr_SetString(PyExc_ValueError, "illegal environment variable name");
        return -1;
    }
    PyObject *entry = PyBytes_FromFormat("%s=%s", kk, PyBytes_AS_STRING(v));
    int ok_lengths = (Py_ssize_t)strlen(kk) == PyBytes_GET_SIZE(k) &&
                     (Py_ssize_t)strlen(PyBytes_AS_STRING(v)) == PyBytes_GET_SIZE(v);
    Py_DECREF(k);
    Py_DECREF(v);
    if (entry == NULL) return -1;
    if (!ok_lengths) {
        Py_DECREF(entry);
        PyErr_SetString(PyExc_ValueError, "embedded null byte");
        return -1;
    }
    return strings_add(s, entry);
}

static int strings_from_env(strings *s, PyObject *env) {
    if (PyDict_Check(env)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(env, &pos, &key, &value))
            if (env_entry(s, key, value) < 0) return -1;
        return 0;
    }
    PyObject *items = PyMapping_Items(env);
    if (items == NULL) return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            env_entry(s, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "env items must be pairs");
            Py_DECREF(items);
            return -1;
        }
    }
    Py_DECREF(items);
    return 0;
}

/* lay `s` out in `*at` as NUL-terminated strings, their pointers in `table` (NULL-terminated) */
static void lay_out(strings *s, char **table, char **at) {
    for (Py_ssize_t i = 0; i < s->count; i++) {
        size_t n = (size_t)PyBytes_GET_SIZE(s->items[i]) + 1;
        memcpy(*at, PyBytes_AS_STRING(s->items[i]), n);
        table[i] = *at;
        *at += n;
    }
    table[s->count] = NULL;
}

/* ------------------------------------------------------------------------------------------------
 * The Python type
 */

typedef struct {
    PyObject_HEAD batch *b;
} BatchObject;

static int batch_usable(BatchObject *self) {
    if (self->b == NULL) {
        PyErr_SetString(PyExc_ValueError, "the batch is closed");
        return 0;
    }
    if (self->b->owner != getpid()) {
        PyErr_SetString(PyExc_RuntimeError, "the batch belongs to the parent process (this one forked)");
        return 0;
    }
    return 1;
}

static PyObject *Batch_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Batch() takes no arguments");
        return NULL;
    }
    BatchObject *self = (BatchObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    batch *b = calloc(1, sizeof *b);
    if (b == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (b->efd < 0) {
        free(b);
        Py_DECREF(self);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    pthread_mutex_init(&b->lock, NULL);
    b->refs = 1;
    b->owner = getpid();
    b->next_id = 1;
    self->b = b;
    return (PyObject *)self;
}

/* Kill job `j` of `b` (pool.lock and b->lock held): a queued job leaves the queue and is returned,
 * to be completed by the caller once the locks are released; a running one's group is killed. */
static job *kill_locked(job *j) {
    if (j->state == QUEUED) {
        job **at = &pool.head, *before = NULL;
        while (*at && *at != j) {
            before = *at;
            at = &(*at)->next_queued;
        }
        if (*at == j) {
            *at = j->next_queued;
            if (pool.tail == j) pool.tail = before;
            pool.queued--;
            j->state = RUNNING; /* taken: completed by the caller */
            j->killed = 1;
            j->cancelled = 1;
            return j;
        }
    }
    j->killed = 1;
    if (j->pid > 0 && j->state != DONE) killpg(j->pid, SIGKILL);
    return NULL;
}

static void batch_close(BatchObject *self) {
    batch *b = self->b;
    if (b == NULL) return;
    self->b = NULL;
    if (b->owner != getpid()) return; /* a forked child: the parent's state, left as it is */
    job *taken = NULL, *done;
    pthread_mutex_lock(&pool.lock);
    pthread_mutex_lock(&b->lock);
    b->closed = 1;
    done = b->done;
    b->done = NULL;
    for (job *j = done; j; j = j->next_done) unlink_active(b, j);
    for (job *j = b->active; j; j = j->next) {
        job *k = kill_locked(j);
        if (k) {
            k->next_done = taken;
            taken = k;
        }
    }
    pthread_mutex_unlock(&b->lock);
    pthread_mutex_unlock(&pool.lock);
    while (done) {
        job *next = done->next_done;
        job_free(done);
        batch_release(b);
        done = next;
    }
    while (taken) {
        job *next = taken->next_done;
        complete(taken); /* (frees it: the batch is closed) */
        taken = next;
    }
    batch_release(b);
}

static void Batch_dealloc(BatchObject *self) {
    batch_close(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Batch_fileno(BatchObject *self, PyObject *unused) {
    (void)unused;
    if (!batch_usable(self)) return NULL;
    return PyLong_FromLong(self->b->efd);
}

static PyObject *Batch_submit(BatchObject *self, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"argv", "executables", "env", "cwd", "stdin", "stderr", "grace", "limit", NULL};
    PyObject *argv_obj, *exes_obj, *env_obj, *cwd_obj;
    Py_buffer input;
    int errfd;
    double grace;
    Py_ssize_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOy*idn:submit", keywords, &argv_obj, &exes_obj, &env_obj,
                                     &cwd_obj, &input, &errfd, &grace, &limit))
        return NULL;
    if (limit < 0) {
        PyBuffer_Release(&input);
        PyErr_SetString(PyExc_ValueError, "limit is negative");
        return NULL;
    }
    if (!batch_usable(self)) {
        PyBuffer_Release(&input);
        return NULL;
    }
    strings argv = {0}, exes = {0}, env = {0}, cwd = {0};
    job *j = NULL;
    PyObject *result = NULL;
    if (strings_from_sequence(&argv, argv_obj, "argv must be a sequence") < 0) goto out;
    if (argv.count == 0) {
        PyErr_SetString(PyExc_ValueError, "argv is empty");
        goto out;
    }
    if (exes_obj == Py_None) {
        Py_INCREF(argv.items[0]);
        if (strings_add(&exes, argv.items[0]) < 0) goto out;
    } else if (strings_from_sequence(&exes, exes_obj, "executables must be a sequence") < 0)
        goto out;
    if (env_obj != Py_None && strings_from_env(&env, env_obj) < 0) goto out;
    if (cwd_obj != Py_None && strings_add_path(&cwd, cwd_obj) < 0) goto out;
    j = calloc(1, sizeof *j);
    if (j == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    j->errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 3); /* the caller may close its file before a cancelled start */
    if (j->errfd < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto out;
    }
    size_t tables = sizeof(char *) * (size_t)(argv.count + 1 + exes.count + 1 + (env_obj != Py_None ? env.count + 1 : 0));
    size_t size = tables + argv.bytes + exes.bytes + env.bytes + cwd.bytes + (size_t)input.len;
    j->block = malloc(size ? size : 1);
    if (j->block == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    char **table = (char **)j->block;
    char *at = j->block + tables;
    j->argv = table;
    lay_out(&argv, table, &at);
    table += argv.count + 1;
    j->exes = table;
    lay_out(&exes, table, &at);
    table += exes.count + 1;
    if (env_obj != Py_None) {
        j->envp = table;
        lay_out(&env, table, &at);
    }
    if (cwd_obj != Py_None) {
        j->cwd = at;
        memcpy(at, PyBytes_AS_STRING(cwd.items[0]), cwd.bytes);
        at += cwd.bytes;
    }
    j->input = at;
    j->input_len = (size_t)input.len;
    memcpy(at, input.buf, (size_t)input.len);
    j->grace = grace;
    j->out_limit = (size_t)limit;
    j->state = QUEUED;
    batch *b = self->b;
    pthread_mutex_lock(&pool.lock);
    pthread_mutex_lock(&b->lock);
    j->batch = b;
    j->id = b->next_id++;
    b->refs++;
    j->next = b->active;
    if (b->active) b->active->prev = j;
    b->active = j;
    pthread_mutex_unlock(&b->lock);
    if (pool.tail) pool.tail->next_queued = j;
    else pool.head = j;
    pool.tail = j;
    pool.queued++;
    /* an idle worker is signalled once the lock is released (signalled under it, it would wake
     * only to block on the lock) */
    int wake = pool.idle >= pool.queued;
    if (!wake && pool.threads < pool.max_threads && add_thread() != 0 && pool.threads == 0) {
        /* no thread at all to run it: take it back and fail */
        pthread_mutex_lock(&b->lock);
        kill_locked(j);
        unlink_active(b, j);
        b->refs--;
        pthread_mutex_unlock(&b->lock);
        pthread_mutex_unlock(&pool.lock);
        PyErr_SetString(PyExc_RuntimeError, "can't start new thread");
        goto out;
    }
    pthread_mutex_unlock(&pool.lock);
    if (wake) pthread_cond_signal(&pool.wake);
    result = PyLong_FromUnsignedLongLong(j->id);
    j = NULL;
out:
    if (j) job_free(j);
    strings_clear(&argv);
    strings_clear(&exes);
    strings_clear(&env);
    strings_clear(&cwd);
    PyBuffer_Release(&input);
    return result;
}

static PyObject *Batch_drain(BatchObject *self, PyObject *unused) {
    (void)unused;
    if (!batch_usable(self)) return NULL;
    batch *b = self->b;
    uint64_t count;
    ssize_t n = read(b->efd, &count, sizeof count); /* first: a completion after it signals again */
    (void)n;
    pthread_mutex_lock(&b->lock);
    job *done = b->done;
    b->done = NULL;
    for (job *j = done; j; j = j->next_done) unlink_active(b, j);
    pthread_mutex_unlock(&b->lock);
    PyObject *list = PyList_New(0);
    int failed = list == NULL;
    while (done) {
        job *j = done;
        done = j->next_done;
        if (!failed) {
            PyObject *item;
            if (j->cancelled) item = Py_BuildValue("(KOO)", j->id, Py_None, Py_None);
            else if (j->err) {
                char *name = j->err_at_cwd ? j->cwd : j->argv[0];
                item = Py_BuildValue("(KO(iy))", j->id, Py_None, j->err, name);
            } else
                item = Py_BuildValue("(K(iy#)O)", j->id, j->code, j->out ? j->out : "", (Py_ssize_t)j->out_len, Py_None);
            if (item == NULL || PyList_Append(list, item) < 0) failed = 1;
            Py_XDECREF(item);
        }
        job_free(j);
        batch_release(b);
    }
    if (failed) {
        Py_XDECREF(list);
        return NULL;
    }
    return list;
}

static PyObject *Batch_kill(BatchObject *self, PyObject *arg) {
    if (!batch_usable(self)) return NULL;
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    batch *b = self->b;
    job *taken = NULL;
    pthread_mutex_lock(&pool.lock);
    pthread_mutex_lock(&b->lock);
    for (job *j = b->active; j; j = j->next)
        if (j->id == id) {
            taken = kill_locked(j);
            break;
        }
    pthread_mutex_unlock(&b->lock);
    pthread_mutex_unlock(&pool.lock);
    if (taken) complete(taken);
    Py_RETURN_NONE;
}

static PyObject *Batch_close_method(BatchObject *self, PyObject *unused) {
    (void)unused;
    batch_close(self);
    Py_RETURN_NONE;
}

static PyMethodDef Batch_methods[] = {
    {"fileno", (PyCFunction)Batch_fileno, METH_NOARGS, "The eventfd signalled when a command finished."},
    {"submit", (PyCFunction)(void (*)(void))Batch_submit, METH_VARARGS | METH_KEYWORDS,
     "Hand a command to a worker thread; returns its job id at once."},
    {"drain", (PyCFunction)Batch_drain, METH_NOARGS, "Every finished command: (job, (code, stdout) | None, (errno, name) | None)."},
    {"kill", (PyCFunction)Batch_kill, METH_O, "Kill a job's process group (a queued job is dropped)."},
    {"close", (PyCFunction)Batch_close_method, METH_NOARGS, "Kill what still runs; it is reaped in its thread."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "knowmeter.executors._native_spawn.Batch",
    .tp_basicsize = sizeof(BatchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The commands of one event loop, run by the worker threads.",
    .tp_new = Batch_new,
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_methods = Batch_methods,
};

static PyObject *pool_state(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    PyObject *state = Py_BuildValue("(iii)", pool.threads, pool.idle, pool.queued);
    pthread_mutex_unlock(&pool.lock);
    return state;
}

static PyObject *configure(PyObject *module, PyObject *args, PyObject *kwds) {
    (void)module;
    static char *keywords[] = {"max_threads", "idle_s", NULL};
    int max_threads;
    double idle_s;
    pthread_mutex_lock(&pool.lock);
    max_threads = pool.max_threads;
    idle_s = pool.idle_s;
    pthread_mutex_unlock(&pool.lock);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$id:configure", keywords, &max_threads, &idle_s)) return NULL;
    if (max_threads < 1 || !(idle_s > 0)) {
        PyErr_SetString(PyExc_ValueError, "max_threads must be >= 1 and idle_s > 0");
        return NULL;
    }
    pthread_mutex_lock(&pool.lock);
    PyObject *previous = Py_BuildValue("(id)", pool.max_threads, pool.idle_s);
    pool.max_threads = max_threads;
    pool.idle_s = idle_s;
    pthread_cond_broadcast(&pool.wake); /* idle threads wait again with the new limit */
    pthread_mutex_unlock(&pool.lock);
    return previous;
}

static PyMethodDef module_methods[] = {
    {"pool_state", pool_state, METH_NOARGS, "(threads, idle threads, queued commands) of the process's pool."},
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Set the pool's max_threads and idle_s; returns the previous (max_threads, idle_s)."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module) {
    int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (fd < 0) {
        PyErr_Format(PyExc_ImportError, "pidfd_open is unavailable (%s): needs Linux >= 5.3", strerror(errno));
        return -1;
    }
    close(fd);
    static int registered = 0;
    if (!registered) {
        init_wake();
        if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0) {
            PyErr_SetString(PyExc_ImportError, "pthread_atfork failed");
            return -1;
        }
        registered = 1;
    }
    if (PyType_Ready(&BatchType) < 0) return -1;
    Py_INCREF(&BatchType);
    if (PyModule_AddObject(module, "Batch", (PyObject *)&BatchType) < 0) {
        Py_DECREF(&BatchType);
        return -1;
    }
    return 0;
}

#else /* not Linux with glibc >= 2.34 */

static PyMethodDef module_methods[] = {{NULL, NULL, 0, NULL}};

static int module_exec(PyObject *module) {
    (void)module;
    PyErr_SetString(PyExc_ImportError, "the native spawner needs Linux with glibc >= 2.34");
    return -1;
}

#endif

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "knowmeter.executors._native_spawn", "Run commands from C worker threads (see _spawn.py).", 0,
    module_methods, module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native_spawn(void) { return PyModuleDef_Init(&module_def); }
