// ThreadSanitizer builds only (the `tsan` preset, tests/hardening/tsan.cmake):
// tells ThreadSanitizer about the happens-before edges that posenc's
// uninstrumented dependencies create, so that it does not report their
// hand-offs as races. posenc links gRPC as static libraries and Debian's
// Abseil as shared ones, both built without -fsanitize=thread: TSan sees
// none of their synchronization. Without this file a real server and a
// real client in one process give ~1,000 reports per test, ~2% of them with
// posenc code making both accesses: a reactor's fields written before
// Finish() and read in OnDone() on another thread, a slice's buffer written
// by a compute thread and released by gRPC's after the send; each ordered
// by gRPC, which TSan cannot see.
//
// Each edge below is one gRPC or Abseil documents; none is a suppression:
//   1. absl::Mutex, absl::CondVar and absl::Notification (Debian's
//      libabsl_synchronization.so; gRPC's gpr_mu, gpr_cv, grpc_core::Mutex
//      and grpc_core::CondVar are these): unlock releases, lock acquires;
//      a condition wait releases and reacquires its mutex; Notify releases
//      and a successful wait acquires. The executable's definitions
//      interpose on the library's (they call the library's through
//      dlsym(RTLD_NEXT)), so gRPC's calls from the executable and the
//      library's own calls through its PLT all come here.
//   2. A batch of call operations completes after it is started:
//      grpc_call_start_batch (and the server's request functions) release
//      the batch's tag; grpc_cq_end_op acquires it, and releases it again
//      with the completing thread's own work, before the completion is
//      queued or its callback run; the thread that takes the completion
//      (grpc_completion_queue_next or _pluck: the sync API's waits and the
//      callback API's threads) acquires it.
//   3. A slice's destroy callback runs after the slice was made:
//      grpc_slice_new_with_user_data releases, the callback acquires.
//   4. A callback call's OnDone runs after its other reactions, and a
//      server's shutdown ends after every OnDone: see the end of this file.
// Edges 2 and 3 are linker wraps (--wrap, tsan.cmake) of gRPC's functions.
// What stays invisible: gRPC's lock-free atomics (the combiners, reference
// counts). Reports that come from those are gRPC's own and are named, each
// with its reason, in tests/hardening/tsan.supp.
#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/config.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "grpc/slice.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/support/server_callback.h"

struct grpc_cq_completion;  // src/core/lib/surface/completion_queue.h

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

#if !ABSL_OPTION_USE_INLINE_NAMESPACE
#error "expects Abseil's inline namespace (Debian's: debian3)"
#endif
#define POSENC_STR2(x) #x
#define POSENC_STR(x) POSENC_STR2(x)

// The library's definition of `suffix` in absl's inline namespace, e.g.
// "5Mutex4LockEv" -> _ZN4absl7debian35Mutex4LockEv.
void* Real(const char* prefix, const char* suffix) {
  const std::string ns = POSENC_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name =
      std::string(prefix) + "4absl" + std::to_string(ns.size()) + ns + suffix;
  void* f = dlsym(RTLD_NEXT, name.c_str());
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_grpc_hb: %s not found: %s\n", name.c_str(),
                 dlerror());
    std::abort();
  }
  return f;
}

template <typename F>
F RealMember(const char* suffix) {
  return reinterpret_cast<F>(Real("_ZN", suffix));
}
template <typename F>
F RealConstMember(const char* suffix) {
  return reinterpret_cast<F>(Real("_ZNK", suffix));
}

// absl::Notification's layout (mutex.h: a Mutex, then the atomic flag that
// the inline HasBeenNotified() loads with acquire).
// A Condition evaluated inside the library: by the waiter that has just
// retaken the mutex, or by the thread that unlocks it (it holds the mutex,
// and evaluates the waiters' conditions to decide whom to wake). Either
// holds the mutex, so the evaluation acquires it; and it reads what the
// waiter set up before it waited (the condition, its captures), which the
// waiter releases before handing it to the library.
struct HeldCondition {
  absl::Mutex* mu;
  const absl::Condition* cond;
  // The proxy the library gets; `this` released by the waiter.
  absl::Condition Proxy() {
    __tsan_release(this);
    return absl::Condition(&HeldCondition::Eval, this);
  }
  static bool Eval(HeldCondition* c) {
    __tsan_acquire(c);
    __tsan_acquire(c->mu);
    const bool met = c->cond->Eval();
    // The waiter, once back from the library, acquires the mutex: what
    // this evaluation read (the waiter's stack) happened before.
    __tsan_release(c->mu);
    return met;
  }
};

// A waiter's condition is evaluated by whichever thread unlocks the mutex
// next (UnlockSlow, also inside Notify, CondVar waits and Await): the waiter
// enqueues itself, condition included, under the mutex's internal spin lock
// and the unlocker takes it off under the same lock. Waiters release this
// address once their condition is built; unlockers acquire it before they
// unlock. (One byte into the Mutex: a sync object of its own.)
void* WaitersOf(const absl::Mutex* mu) {
  return reinterpret_cast<char*>(const_cast<absl::Mutex*>(mu)) + 1;
}

struct NotificationLayout {
  absl::Mutex mutex;
  std::atomic<bool> notified_yet;
};
static_assert(sizeof(NotificationLayout) == sizeof(absl::Notification),
              "absl::Notification's layout changed");

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

// ---- 1. Mutex, CondVar, Notification ----
void Mutex::Lock() {
  static const auto real = RealMember<void (*)(Mutex*)>("5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}
void Mutex::Unlock() {
  static const auto real = RealMember<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_acquire(WaitersOf(this));
  __tsan_release(this);
  real(this);
}
bool Mutex::TryLock() {
  static const auto real = RealMember<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}
void Mutex::ReaderLock() {
  static const auto real = RealMember<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}
void Mutex::ReaderUnlock() {
  static const auto real =
      RealMember<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  __tsan_acquire(WaitersOf(this));
  __tsan_release(this);
  real(this);
}
bool Mutex::ReaderTryLock() {
  static const auto real =
      RealMember<bool (*)(Mutex*)>("5Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}
void Mutex::LockWhen(const Condition& cond) {
  static const auto real = RealMember<void (*)(Mutex*, const Condition&)>(
      "5Mutex8LockWhenERKNS0_9ConditionE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  real(this, proxy);
  __tsan_acquire(this);
}
void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real = RealMember<void (*)(Mutex*, const Condition&)>(
      "5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  real(this, proxy);
  __tsan_acquire(this);
}
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealMember<bool (*)(Mutex*, const Condition&, Duration)>(
          "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, timeout);
  __tsan_acquire(this);  // held either way
  return met;
}
bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const auto real = RealMember<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, deadline);
  __tsan_acquire(this);
  return met;
}
bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealMember<bool (*)(Mutex*, const Condition&, Duration)>(
          "5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_"
          "8DurationE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, timeout);
  __tsan_acquire(this);
  return met;
}
bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const auto real = RealMember<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, deadline);
  __tsan_acquire(this);
  return met;
}
void Mutex::Await(const Condition& cond) {
  static const auto real = RealMember<void (*)(Mutex*, const Condition&)>(
      "5Mutex5AwaitERKNS0_9ConditionE");
  __tsan_acquire(WaitersOf(this));
  __tsan_release(this);
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  real(this, proxy);
  __tsan_acquire(this);
}
bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealMember<bool (*)(Mutex*, const Condition&, Duration)>(
          "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_acquire(WaitersOf(this));
  __tsan_release(this);
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, timeout);
  __tsan_acquire(this);
  return met;
}
bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static const auto real = RealMember<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_acquire(WaitersOf(this));
  __tsan_release(this);
  HeldCondition held{this, &cond};
  const Condition proxy = held.Proxy();
  __tsan_release(WaitersOf(this));
  const bool met = real(this, proxy, deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real =
      RealMember<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  __tsan_acquire(WaitersOf(mu));
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static const auto real = RealMember<bool (*)(CondVar*, Mutex*, Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_acquire(WaitersOf(mu));
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static const auto real = RealMember<bool (*)(CondVar*, Mutex*, Time)>(
      "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_acquire(WaitersOf(mu));
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

void Notification::Notify() {
  static const auto real =
      RealMember<void (*)(Notification*)>("12Notification6NotifyEv");
  auto* n = reinterpret_cast<NotificationLayout*>(this);
  __tsan_acquire(WaitersOf(&n->mutex));  // Notify unlocks it inside
  __tsan_release(this);
  __tsan_release(&n->notified_yet);  // for the inline HasBeenNotified()
  real(this);
}
void Notification::WaitForNotification() const {
  static const auto real = RealConstMember<void (*)(const Notification*)>(
      "12Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}
bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  static const auto real =
      RealConstMember<bool (*)(const Notification*, Duration)>(
          "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}
bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  static const auto real = RealConstMember<bool (*)(const Notification*, Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl

// ---- 2. Call batches and their completions; 3. slices ----
using CqDone = void (*)(void*, grpc_cq_completion*);
// Weak: an executable without gRPC (a core unit test) links this file too,
// and never calls the wrappers.
#define POSENC_REAL __attribute__((weak))

extern "C" {
POSENC_REAL grpc_call_error __real_grpc_call_start_batch(grpc_call*,
                                                         const grpc_op*, size_t,
                                                         void*, void*);
grpc_call_error __wrap_grpc_call_start_batch(grpc_call* call,
                                             const grpc_op* ops, size_t nops,
                                             void* tag, void* reserved) {
  if (tag != nullptr) __tsan_release(tag);
  return __real_grpc_call_start_batch(call, ops, nops, tag, reserved);
}

POSENC_REAL grpc_call_error __real_grpc_server_request_call(
    grpc_server*, grpc_call**, grpc_call_details*, grpc_metadata_array*,
    grpc_completion_queue*, grpc_completion_queue*, void*);
grpc_call_error __wrap_grpc_server_request_call(
    grpc_server* server, grpc_call** call, grpc_call_details* details,
    grpc_metadata_array* metadata, grpc_completion_queue* bound,
    grpc_completion_queue* notification, void* tag) {
  if (tag != nullptr) __tsan_release(tag);
  return __real_grpc_server_request_call(server, call, details, metadata, bound,
                                         notification, tag);
}

POSENC_REAL grpc_call_error __real_grpc_server_request_registered_call(
    grpc_server*, void*, grpc_call**, gpr_timespec*, grpc_metadata_array*,
    grpc_byte_buffer**, grpc_completion_queue*, grpc_completion_queue*, void*);
grpc_call_error __wrap_grpc_server_request_registered_call(
    grpc_server* server, void* registered_method, grpc_call** call,
    gpr_timespec* deadline, grpc_metadata_array* metadata,
    grpc_byte_buffer** payload, grpc_completion_queue* bound,
    grpc_completion_queue* notification, void* tag) {
  if (tag != nullptr) __tsan_release(tag);
  return __real_grpc_server_request_registered_call(
      server, registered_method, call, deadline, metadata, payload, bound,
      notification, tag);
}

// void grpc_cq_end_op(grpc_completion_queue*, void* tag, grpc_error_handle,
//                     done, void* done_arg, grpc_cq_completion*, bool)
// (src/core/lib/surface/completion_queue.h: C++ linkage; grpc_error_handle
// is absl::Status, passed by value). The completing thread acquires what
// the batch's starter released, and passes it on, with its own work, to
// the thread that takes the completion from the queue.
#define POSENC_CQ_END_OP \
  _Z14grpc_cq_end_opP21grpc_completion_queuePvN4absl7debian36StatusEPFvS1_P18grpc_cq_completionES1_S6_b
#define POSENC_CAT2(a, b) a##b
#define POSENC_CAT(a, b) POSENC_CAT2(a, b)
POSENC_REAL void POSENC_CAT(__real_,
                            POSENC_CQ_END_OP)(grpc_completion_queue*, void*,
                                              absl::Status, CqDone, void*,
                                              grpc_cq_completion*, bool);
void POSENC_CAT(__wrap_, POSENC_CQ_END_OP)(grpc_completion_queue* cq, void* tag,
                                           absl::Status error, CqDone done,
                                           void* done_arg,
                                           grpc_cq_completion* storage,
                                           bool internal) {
  if (tag != nullptr) {
    __tsan_acquire(tag);
    __tsan_release(tag);
  }
  POSENC_CAT(__real_, POSENC_CQ_END_OP)
  (cq, tag, std::move(error), done, done_arg, storage, internal);
}

// The thread that takes a completion from a queue (the sync API's waits,
// the callback API's "nexting" threads) acquires its tag.
POSENC_REAL grpc_event __real_grpc_completion_queue_next(grpc_completion_queue*,
                                                         gpr_timespec, void*);
grpc_event __wrap_grpc_completion_queue_next(grpc_completion_queue* cq,
                                             gpr_timespec deadline,
                                             void* reserved) {
  const grpc_event ev =
      __real_grpc_completion_queue_next(cq, deadline, reserved);
  if (ev.type == GRPC_OP_COMPLETE && ev.tag != nullptr) {
    __tsan_acquire(ev.tag);
  }
  return ev;
}
POSENC_REAL grpc_event __real_grpc_completion_queue_pluck(
    grpc_completion_queue*, void*, gpr_timespec, void*);
grpc_event __wrap_grpc_completion_queue_pluck(grpc_completion_queue* cq,
                                              void* tag, gpr_timespec deadline,
                                              void* reserved) {
  const grpc_event ev =
      __real_grpc_completion_queue_pluck(cq, tag, deadline, reserved);
  if (ev.type == GRPC_OP_COMPLETE && ev.tag != nullptr) {
    __tsan_acquire(ev.tag);
  }
  return ev;
}

// A slice's user data, wrapped so that its destroy callback acquires what
// the slice's maker released.
struct SliceDestroy {
  void (*destroy)(void*);
  void* user_data;
};
static void RunSliceDestroy(void* p) {
  __tsan_acquire(p);
  auto* d = static_cast<SliceDestroy*>(p);
  d->destroy(d->user_data);
  delete d;
}
POSENC_REAL grpc_slice __real_grpc_slice_new_with_user_data(void*, size_t,
                                                            void (*)(void*),
                                                            void*);
grpc_slice __wrap_grpc_slice_new_with_user_data(void* p, size_t len,
                                                void (*destroy)(void*),
                                                void* user_data) {
  auto* d = new SliceDestroy{destroy, user_data};
  __tsan_release(d);
  return __real_grpc_slice_new_with_user_data(p, len, &RunSliceDestroy, d);
}
}  // extern "C"

// ---- 4. A callback call's last reference ----
// gRPC counts a callback call's outstanding reactions
// (ServerCallbackCall::callbacks_outstanding_) and runs OnDone once the
// count reaches zero. The decrements in gRPC's headers are compiled into
// posenc (instrumented), but the one after an OnCancel that gRPC sends to
// its executor is in its src/cpp/server/server_callback.cc (not): TSan then
// misses that the reactions before it happened before OnDone. This is that
// file's two functions (gRPC 1.51.1, same behavior), compiled instrumented;
// they replace the library's (the linker then never takes its
// server_callback.o). The reactions gRPC would send to its executor run on
// two threads of this file's instead.
namespace {

class ReactionRunner {
 public:
  static ReactionRunner& Get() {
    static ReactionRunner* runner = new ReactionRunner;  // never destroyed
    return *runner;
  }
  void Run(std::function<void()> reaction) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(reaction));
    }
    ready_.notify_one();
  }

 private:
  ReactionRunner() {
    for (int i = 0; i < 2; ++i) std::thread([this] { Loop(); }).detach();
  }
  void Loop() {
    for (;;) {
      std::function<void()> reaction;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        reaction = std::move(queue_.front());
        queue_.pop_front();
      }
      reaction();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
};

// Every OnDone releases this once it has returned. grpc::Server's shutdown
// waits for the last one (each call's end drops a reference to the server,
// an uninstrumented atomic; only the last takes the server's mutex), then
// lets its callback queue go: ReleaseCallbackAlternativeCQ acquires this.
char g_ondone_returned;

}  // namespace

extern "C" {
POSENC_REAL void
__real__ZN4grpc15CompletionQueue28ReleaseCallbackAlternativeCQEPS0_(
    grpc::CompletionQueue*);
void __wrap__ZN4grpc15CompletionQueue28ReleaseCallbackAlternativeCQEPS0_(
    grpc::CompletionQueue* cq) {
  __tsan_acquire(&g_ondone_returned);
  __real__ZN4grpc15CompletionQueue28ReleaseCallbackAlternativeCQEPS0_(cq);
}
}  // extern "C"

namespace grpc {
namespace internal {

void ServerCallbackCall::ScheduleOnDone(bool inline_ondone) {
  // The last Unref (acq_rel) may have been gRPC's own, uninstrumented: every
  // earlier reaction released callbacks_outstanding_ with its decrement.
  __tsan_acquire(&callbacks_outstanding_);
  if (inline_ondone) {
    CallOnDone();
    __tsan_release(&g_ondone_returned);
  } else {
    ReactionRunner::Get().Run([this] {
      CallOnDone();
      __tsan_release(&g_ondone_returned);
    });
  }
}

void ServerCallbackCall::CallOnCancel(ServerReactor* reactor) {
  // Called by whichever of the reactor's binding (posenc's handler thread)
  // and the cancellation (gRPC's CompletionOp, uninstrumented) comes second
  // to on_cancel_conditions_remaining_'s acq_rel decrement: the reactor was
  // built before the first.
  __tsan_acquire(&on_cancel_conditions_remaining_);
  if (reactor->InternalInlineable()) {
    reactor->OnCancel();
  } else {
    // Ref so that the call outlives the reaction; MaybeDone lets it go.
    Ref();
    ReactionRunner::Get().Run([this, reactor] {
      reactor->OnCancel();
      MaybeDone();
    });
  }
}

}  // namespace internal
}  // namespace grpc
