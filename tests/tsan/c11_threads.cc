// C11 threads on top of pthreads, preloaded into ThreadSanitizer test runs (scripts/tsan.sh).
//
// Debian's librdkafka creates its threads and locks its mutexes through glibc's C11 threads
// (thrd_create, mtx_lock, cnd_wait). glibc implements those with internal calls that bypass the
// pthread functions ThreadSanitizer intercepts, so TSan never hears of librdkafka's threads (and
// crashes in the first allocation one of them makes) nor of its locks. Preloaded, these
// definitions take precedence over glibc's and go through the intercepted pthread functions.
// glibc's mtx_t and cnd_t have the size and layout of pthread_mutex_t and pthread_cond_t.
#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>

namespace {

int ToThrd(int pthread_result) {
  switch (pthread_result) {
    case 0:
      return thrd_success;
    case ETIMEDOUT:
      return thrd_timedout;
    case EBUSY:
      return thrd_busy;
    case ENOMEM:
      return thrd_nomem;
    default:
      return thrd_error;
  }
}

struct Start {
  thrd_start_t function;
  void* argument;
};

void* RunThread(void* start_pointer) {
  const Start start = *static_cast<Start*>(start_pointer);
  delete static_cast<Start*>(start_pointer);
  return reinterpret_cast<void*>(static_cast<intptr_t>(start.function(start.argument)));
}

pthread_mutex_t* AsPthread(mtx_t* mutex) { return reinterpret_cast<pthread_mutex_t*>(mutex); }
pthread_cond_t* AsPthread(cnd_t* cond) { return reinterpret_cast<pthread_cond_t*>(cond); }

static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t));
static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t));

}  // namespace

extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t function, void* argument) {
  auto* start = new Start{function, argument};
  pthread_t id;
  const int result = pthread_create(&id, nullptr, RunThread, start);
  if (result != 0) {
    delete start;
    return ToThrd(result);
  }
  *thread = id;
  return thrd_success;
}

int thrd_join(thrd_t thread, int* exit_code) {
  void* value = nullptr;
  const int result = pthread_join(thread, &value);
  if (result == 0 && exit_code != nullptr) {
    *exit_code = static_cast<int>(reinterpret_cast<intptr_t>(value));
  }
  return ToThrd(result);
}

int thrd_detach(thrd_t thread) { return ToThrd(pthread_detach(thread)); }

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  if (type & mtx_recursive) pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  const int result = pthread_mutex_init(AsPthread(mutex), &attributes);
  pthread_mutexattr_destroy(&attributes);
  return ToThrd(result);
}

int mtx_lock(mtx_t* mutex) { return ToThrd(pthread_mutex_lock(AsPthread(mutex))); }
int mtx_trylock(mtx_t* mutex) { return ToThrd(pthread_mutex_trylock(AsPthread(mutex))); }
int mtx_timedlock(mtx_t* mutex, const struct timespec* deadline) {
  return ToThrd(pthread_mutex_timedlock(AsPthread(mutex), deadline));
}
int mtx_unlock(mtx_t* mutex) { return ToThrd(pthread_mutex_unlock(AsPthread(mutex))); }
void mtx_destroy(mtx_t* mutex) { pthread_mutex_destroy(AsPthread(mutex)); }

int cnd_init(cnd_t* cond) { return ToThrd(pthread_cond_init(AsPthread(cond), nullptr)); }
int cnd_signal(cnd_t* cond) { return ToThrd(pthread_cond_signal(AsPthread(cond))); }
int cnd_broadcast(cnd_t* cond) { return ToThrd(pthread_cond_broadcast(AsPthread(cond))); }
int cnd_wait(cnd_t* cond, mtx_t* mutex) {
  return ToThrd(pthread_cond_wait(AsPthread(cond), AsPthread(mutex)));
}
int cnd_timedwait(cnd_t* cond, mtx_t* mutex, const struct timespec* deadline) {
  return ToThrd(pthread_cond_timedwait(AsPthread(cond), AsPthread(mutex), deadline));
}
void cnd_destroy(cnd_t* cond) { pthread_cond_destroy(AsPthread(cond)); }

}  // extern "C"
