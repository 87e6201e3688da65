/*!
 * \file host_runtime.c
 * \brief The C runtime API for compiled kernels running inside a Python process.
 *
 * Errors are thread-local strings; function handles are reference-counted nodes around a
 * TVMPackedCFunc; the registry and modules are answered by Python hooks; workspaces on the CPU
 * are aligned heap blocks; parallel launches run on a persistent pthread pool.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT; implies POSIX.1-2008 */
#include "host_runtime.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ errors */

static _Thread_local char* tls_last_error = NULL;
static _Thread_local size_t tls_last_error_cap = 0;

void TVMAPISetLastError(const char* msg) {
  size_t len;
  if (msg == NULL) msg = "";
  len = strlen(msg) + 1;
  if (len > tls_last_error_cap) {
    char* grown = (char*)realloc(tls_last_error, len);
    if (grown == NULL) return; /* keep the previous message rather than lose the process */
    tls_last_error = grown;
    tls_last_error_cap = len;
  }
  memcpy(tls_last_error, msg, len);
}

const char* TVMGetLastError(void) { return tls_last_error != NULL ? tls_last_error : ""; }

/* ------------------------------------------------------------------ hooks */

static PyTVMHooks g_hooks;
static int g_hooks_set = 0;

void PyTVMSetHooks(const PyTVMHooks* hooks) {
  g_hooks = *hooks;
  g_hooks_set = 1;
}

static int no_hooks(const char* what) {
  char msg[160];
  (void)snprintf(msg, sizeof(msg),
                 "RuntimeError: %s: the pytvm host runtime is not initialised (no hooks set); "
                 "load it with pytvm.ffi.runtime_library()",
                 what);
  TVMAPISetLastError(msg);
  return -1;
}

/* ------------------------------------------------------------------ function handles */

typedef struct {
  TVMPackedCFunc func;
  void* resource;
  TVMPackedCFuncFinalizer fin;
  atomic_int refcount;
  uint32_t magic;
} FuncNode;

#define FUNC_NODE_MAGIC 0x70664e31u /* "pfN1": catches handles that are not function nodes */

static FuncNode* as_node(TVMFunctionHandle h) {
  FuncNode* node = (FuncNode*)h;
  if (node == NULL || node->magic != FUNC_NODE_MAGIC) {
    TVMAPISetLastError("ValueError: not a valid function handle");
    return NULL;
  }
  return node;
}

int TVMFuncCreateFromCFunc(TVMPackedCFunc func, void* resource_handle,
                           TVMPackedCFuncFinalizer fin, TVMFunctionHandle* out) {
  FuncNode* node;
  if (func == NULL || out == NULL) {
    TVMAPISetLastError("ValueError: TVMFuncCreateFromCFunc needs a function and an out pointer");
    return -1;
  }
  node = (FuncNode*)malloc(sizeof(FuncNode));
  if (node == NULL) {
    TVMAPISetLastError("MemoryError: cannot allocate a function handle");
    return -1;
  }
  node->func = func;
  node->resource = resource_handle;
  node->fin = fin;
  atomic_init(&node->refcount, 1);
  node->magic = FUNC_NODE_MAGIC;
  *out = node;
  return 0;
}

int TVMFuncRetain(TVMFunctionHandle func) {
  FuncNode* node = as_node(func);
  if (node == NULL) return -1;
  atomic_fetch_add(&node->refcount, 1);
  return 0;
}

int TVMFuncFree(TVMFunctionHandle func) {
  FuncNode* node;
  if (func == NULL) return 0;
  node = as_node(func);
  if (node == NULL) return -1;
  if (atomic_fetch_sub(&node->refcount, 1) == 1) {
    if (node->fin != NULL) node->fin(node->resource);
    node->magic = 0;
    free(node);
  }
  return 0;
}

int TVMFuncCall(TVMFunctionHandle func, TVMValue* args, int* arg_type_codes, int num_args,
                TVMValue* ret_val, int* ret_type_code) {
  FuncNode* node = as_node(func);
  if (node == NULL) return -1;
  *ret_type_code = kTVMNullptr;
  return node->func(args, arg_type_codes, num_args, ret_val, ret_type_code, node->resource);
}

int PyTVMFuncGetCFunc(TVMFunctionHandle func, TVMPackedCFunc* out_func, void** out_resource) {
  FuncNode* node = as_node(func);
  if (node == NULL) return -1;
  *out_func = node->func;
  *out_resource = node->resource;
  return 0;
}

int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out) {
  if (!g_hooks_set) return no_hooks("TVMFuncGetGlobal");
  return g_hooks.get_global(name, out);
}

int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  if (!g_hooks_set) return no_hooks("TVMFuncRegisterGlobal");
  return g_hooks.register_global(name, f, override);
}

int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports,
                      TVMFunctionHandle* out) {
  if (!g_hooks_set) return no_hooks("TVMModGetFunction");
  return g_hooks.mod_get_function(mod, func_name, query_imports, out);
}

int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* out) {
  int ret;
  if (!g_hooks_set) return no_hooks("TVMBackendGetFuncFromEnv");
  ret = g_hooks.mod_get_function(mod_node, func_name, 1, out);
  if (ret == 0 && *out == NULL) {
    ret = g_hooks.get_global(func_name, out);
  }
  if (ret == 0 && *out == NULL) {
    size_t len = strlen(func_name) + 64;
    char* msg = (char*)malloc(len);
    if (msg != NULL) {
      (void)snprintf(msg, len, "AttributeError: cannot find function %s", func_name);
      TVMAPISetLastError(msg);
      free(msg);
    }
    return -1;
  }
  return ret;
}

/* ------------------------------------------------------------------ workspace */

#define WORKSPACE_ALIGN 64

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  if (device_type == kDLCPU) {
    void* ptr = NULL;
    size_t size = (size_t)((nbytes + WORKSPACE_ALIGN - 1) / WORKSPACE_ALIGN * WORKSPACE_ALIGN);
    if (posix_memalign(&ptr, WORKSPACE_ALIGN, size == 0 ? WORKSPACE_ALIGN : size) != 0) {
      TVMAPISetLastError("MemoryError: TVMBackendAllocWorkspace: out of memory");
      return NULL;
    }
    return ptr;
  }
  if (!g_hooks_set) {
    (void)no_hooks("TVMBackendAllocWorkspace");
    return NULL;
  }
  return g_hooks.alloc_workspace(device_type, device_id, nbytes, dtype_code_hint,
                                 dtype_bits_hint);
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  if (device_type == kDLCPU) {
    free(ptr);
    return 0;
  }
  if (!g_hooks_set) return no_hooks("TVMBackendFreeWorkspace");
  return g_hooks.free_workspace(device_type, device_id, ptr);
}

/* ------------------------------------------------------------------ timing */

static double now_seconds(void) {
  struct timespec ts;
  (void)clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int PyTVMTimeCall(TVMPackedCFunc f, void* resource, TVMValue* args, int* codes, int num_args,
                  int number, double* out_seconds) {
  int i;
  double start = now_seconds();
  for (i = 0; i < number; ++i) {
    TVMValue ret;
    int ret_code = kTVMNullptr;
    if (f(args, codes, num_args, &ret, &ret_code, resource) != 0) return -1;
  }
  *out_seconds = now_seconds() - start;
  return 0;
}

/* ------------------------------------------------------------------ thread pool */

typedef struct {
  atomic_int arrived;
  atomic_int generation;
  int num_task;
} Barrier;

/* A launch's tasks are claimed, not assigned: the launching thread and the workers take task
 * ids from one ticket until none is left, and the launch waits only for the tasks that were
 * taken. A worker that has not woken yet (the machine is busy, or the pool is larger than the
 * cores free) takes nothing, and the launching thread runs its share: a parallel loop never
 * waits a scheduler time slice for a thread that is not running.
 *
 * The ticket is one 64-bit word: the launch's sequence number (high 32 bits) and the next task
 * id (low 32 bits), CLOSED while the launch's fields are written. A thread reads the ticket,
 * then the fields, then claims with a compare-and-swap on the ticket it read: the swap fails
 * if the launch changed in between, so a claimed task always runs with its own launch's
 * fields (the fields change only after the ticket is closed). */
#define PYTVM_TICKET_CLOSED 0xFFFFFFFFu

typedef struct {
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_cond_t done;
  pthread_t* threads;
  int num_workers;                     /* threads in the pool besides the launching one */
  _Atomic(unsigned long long) ticket;  /* (sequence << 32) | next task id */
  _Atomic(FTVMParallelLambda) flambda;
  _Atomic(void*) cdata;
  atomic_int num_task;
  atomic_int finished; /* tasks of the current launch that have returned */
  atomic_int sleepers; /* workers waiting on `wake` */
  atomic_int waiting;  /* 1 while the launching thread waits on `done` */
  int failed;          /* under mutex */
  char* error;         /* last error of the first task that failed on a worker (malloc'd) */
  TVMParallelGroupEnv env;
  Barrier barrier;
} ThreadPool;

static ThreadPool g_pool;
static pthread_once_t g_pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_launch_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_requested_threads = 0;
static _Thread_local int tls_in_parallel = 0;

/* Before sleeping on a condition variable, a worker waiting for the next launch and the launcher
 * waiting for the tasks taken poll for this many rounds (a few tens of microseconds): a graph
 * runs kernel after kernel, and a futex wake-up per kernel costs more than the small ones take. */
#define PYTVM_SPIN_ROUNDS 20000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The cores this process may run on (taskset, cgroups), else the cores online. */
static int detect_threads(void) {
  long n;
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int PyTVMNumThreads(void) { return g_requested_threads > 0 ? g_requested_threads : detect_threads(); }

void PyTVMSetNumThreads(int num_threads) { g_requested_threads = num_threads > 0 ? num_threads : 0; }

static unsigned ticket_sequence(unsigned long long ticket) { return (unsigned)(ticket >> 32); }

static unsigned ticket_next(unsigned long long ticket) { return (unsigned)(ticket & 0xFFFFFFFFu); }

/* Claim a task of the launch with sequence `sequence`: its id, or -1 when none is left (or the
 * launch is over). The lambda and closure returned belong to that launch. */
static int claim_task(unsigned sequence, FTVMParallelLambda* flambda, void** cdata) {
  unsigned long long ticket = atomic_load_explicit(&g_pool.ticket, memory_order_acquire);
  for (;;) {
    unsigned next = ticket_next(ticket);
    int num_task;
    if (ticket_sequence(ticket) != sequence || next == PYTVM_TICKET_CLOSED) return -1;
    *flambda = atomic_load_explicit(&g_pool.flambda, memory_order_relaxed);
    *cdata = atomic_load_explicit(&g_pool.cdata, memory_order_relaxed);
    num_task = atomic_load_explicit(&g_pool.num_task, memory_order_relaxed);
    if ((int)next >= num_task) return -1;
    if (atomic_compare_exchange_weak_explicit(&g_pool.ticket, &ticket, ticket + 1,
                                              memory_order_acq_rel, memory_order_acquire)) {
      return (int)next;
    }
  }
}

/* Run a claimed task on a worker: count it finished, keep its error, wake the launcher if it
 * sleeps and this was the last task. */
static void run_worker_task(int task, FTVMParallelLambda flambda, void* cdata) {
  int rc = flambda(task, &g_pool.env, cdata);
  if (rc != 0) {
    pthread_mutex_lock(&g_pool.mutex);
    if (!g_pool.failed) g_pool.error = strdup(TVMGetLastError()); /* the text is thread-local */
    g_pool.failed = 1;
    pthread_mutex_unlock(&g_pool.mutex);
  }
  if (atomic_fetch_add(&g_pool.finished, 1) + 1 ==
          atomic_load_explicit(&g_pool.num_task, memory_order_relaxed) &&
      atomic_load(&g_pool.waiting)) {
    pthread_mutex_lock(&g_pool.mutex);
    pthread_cond_signal(&g_pool.done);
    pthread_mutex_unlock(&g_pool.mutex);
  }
}

static void* worker_main(void* arg) {
  unsigned seen = 0; /* the last launch this worker took part in */
  (void)arg;
  tls_in_parallel = 1;
  for (;;) {
    unsigned sequence;
    FTVMParallelLambda flambda;
    void* cdata;
    int task;
    {
      int spin;
      for (spin = 0; spin < PYTVM_SPIN_ROUNDS &&
                     ticket_sequence(atomic_load(&g_pool.ticket)) == seen;
           ++spin) {
        cpu_relax();
      }
    }
    if (ticket_sequence(atomic_load(&g_pool.ticket)) == seen) {
      pthread_mutex_lock(&g_pool.mutex);
      atomic_fetch_add(&g_pool.sleepers, 1);
      while (ticket_sequence(atomic_load(&g_pool.ticket)) == seen) {
        pthread_cond_wait(&g_pool.wake, &g_pool.mutex);
      }
      atomic_fetch_sub(&g_pool.sleepers, 1);
      pthread_mutex_unlock(&g_pool.mutex);
    }
    sequence = ticket_sequence(atomic_load(&g_pool.ticket));
    seen = sequence;
    while ((task = claim_task(sequence, &flambda, &cdata)) >= 0) {
      run_worker_task(task, flambda, cdata);
    }
  }
  return NULL;
}

static void pool_init(void) {
  (void)pthread_mutex_init(&g_pool.mutex, NULL);
  (void)pthread_cond_init(&g_pool.wake, NULL);
  (void)pthread_cond_init(&g_pool.done, NULL);
}

/* A forked child (an RPC server forks one worker process per session) has only the thread
 * that forked: forget the parent's workers and lock states, so the next launch starts fresh
 * workers instead of waiting for threads that do not exist. */
static void pool_after_fork_child(void) {
  (void)pthread_mutex_init(&g_pool.mutex, NULL);
  (void)pthread_cond_init(&g_pool.wake, NULL);
  (void)pthread_cond_init(&g_pool.done, NULL);
  (void)pthread_mutex_init(&g_launch_mutex, NULL);
  free(g_pool.threads);
  g_pool.threads = NULL;
  g_pool.num_workers = 0;
  atomic_store(&g_pool.sleepers, 0);
  atomic_store(&g_pool.waiting, 0);
  g_pool.failed = 0;
  g_pool.error = NULL;
}

__attribute__((constructor)) static void register_fork_handler(void) {
  (void)pthread_atfork(NULL, NULL, pool_after_fork_child);
}

static int ensure_workers(int wanted) {
  int i;
  pthread_t* grown;
  if (g_pool.num_workers >= wanted) return 0;
  grown = (pthread_t*)realloc(g_pool.threads, sizeof(pthread_t) * (size_t)wanted);
  if (grown == NULL) return -1;
  g_pool.threads = grown;
  for (i = g_pool.num_workers; i < wanted; ++i) {
    if (pthread_create(&g_pool.threads[i], NULL, worker_main, NULL) != 0) return -1;
    (void)pthread_detach(g_pool.threads[i]);
    g_pool.num_workers = i + 1;
  }
  return 0;
}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int failed = 0;
  char* worker_error;
  char* own_error = NULL;
  unsigned sequence;
  int task;
  FTVMParallelLambda claimed_lambda;
  void* claimed_cdata;
  if (num_task <= 0) num_task = PyTVMNumThreads();
  if (num_task == 1 || tls_in_parallel) {
    /* One task, or a launch nested inside a task: run here as the only task (task 0 of 1), as
     * TVM does on one thread. A lambda splits its work by penv->num_task, so task 0 of 1 does
     * all of it, and a barrier inside stays correct (tasks run one after another could not
     * meet at a barrier). */
    TVMParallelGroupEnv env;
    Barrier barrier;
    atomic_init(&barrier.arrived, 0);
    atomic_init(&barrier.generation, 0);
    barrier.num_task = 1;
    env.sync_handle = &barrier;
    env.num_task = 1;
    return flambda(0, &env, cdata) != 0 ? -1 : 0;
  }
  (void)pthread_once(&g_pool_once, pool_init);
  pthread_mutex_lock(&g_launch_mutex);
  pthread_mutex_lock(&g_pool.mutex);
  if (ensure_workers(num_task - 1) != 0) {
    pthread_mutex_unlock(&g_pool.mutex);
    pthread_mutex_unlock(&g_launch_mutex);
    TVMAPISetLastError("RuntimeError: TVMBackendParallelLaunch: cannot start worker threads");
    return -1;
  }
  /* Close the ticket, write the launch, then open it under the next sequence number. */
  sequence = ticket_sequence(atomic_load(&g_pool.ticket)) + 1u;
  atomic_store(&g_pool.ticket, ((unsigned long long)(sequence - 1u) << 32) | PYTVM_TICKET_CLOSED);
  atomic_store_explicit(&g_pool.flambda, flambda, memory_order_relaxed);
  atomic_store_explicit(&g_pool.cdata, cdata, memory_order_relaxed);
  atomic_store_explicit(&g_pool.num_task, num_task, memory_order_relaxed);
  atomic_store(&g_pool.finished, 0);
  g_pool.failed = 0;
  g_pool.env.sync_handle = &g_pool.barrier;
  g_pool.env.num_task = num_task;
  atomic_store(&g_pool.barrier.arrived, 0);
  g_pool.barrier.num_task = num_task;
  atomic_store_explicit(&g_pool.ticket, (unsigned long long)sequence << 32, memory_order_release);
  if (atomic_load(&g_pool.sleepers) > 0) pthread_cond_broadcast(&g_pool.wake);
  pthread_mutex_unlock(&g_pool.mutex);

  /* This thread takes tasks too, until none is left. */
  tls_in_parallel = 1;
  while ((task = claim_task(sequence, &claimed_lambda, &claimed_cdata)) >= 0) {
    if (claimed_lambda(task, &g_pool.env, claimed_cdata) != 0 && own_error == NULL) {
      own_error = strdup(TVMGetLastError());
      failed = 1;
    }
    atomic_fetch_add(&g_pool.finished, 1);
  }
  tls_in_parallel = 0;

  /* Every task is taken: wait for those still running on workers. */
  {
    int spin;
    for (spin = 0; spin < PYTVM_SPIN_ROUNDS && atomic_load(&g_pool.finished) < num_task; ++spin) {
      cpu_relax();
    }
  }
  if (atomic_load(&g_pool.finished) < num_task) {
    pthread_mutex_lock(&g_pool.mutex);
    atomic_store(&g_pool.waiting, 1);
    while (atomic_load(&g_pool.finished) < num_task) {
      pthread_cond_wait(&g_pool.done, &g_pool.mutex);
    }
    atomic_store(&g_pool.waiting, 0);
    pthread_mutex_unlock(&g_pool.mutex);
  }
  pthread_mutex_lock(&g_pool.mutex);
  failed = failed || g_pool.failed;
  worker_error = g_pool.error;
  g_pool.error = NULL;
  pthread_mutex_unlock(&g_pool.mutex);
  pthread_mutex_unlock(&g_launch_mutex);
  if (failed) {
    const char* message = own_error != NULL ? own_error : worker_error;
    TVMAPISetLastError(message != NULL ? message : "RuntimeError: a parallel task failed");
  }
  free(own_error);
  free(worker_error);
  return failed ? -1 : 0;
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  Barrier* barrier = (Barrier*)penv->sync_handle;
  int generation;
  (void)task_id;
  if (barrier->num_task <= 1) return 0;
  generation = atomic_load(&barrier->generation);
  if (atomic_fetch_add(&barrier->arrived, 1) == barrier->num_task - 1) {
    atomic_store(&barrier->arrived, 0);
    atomic_fetch_add(&barrier->generation, 1);
  } else {
    while (atomic_load(&barrier->generation) == generation) {
      sched_yield();
    }
  }
  return 0;
}
