// UnaryCall: one unary posenc.v1 call, from its handler's start to its end,
// on gRPC's public callback API only:
//   - its reactor is the context's DefaultReactor(), whose reactions
//     (OnDone, OnCancel) gRPC runs inline. A reactor of our own would have
//     its OnDone handed to gRPC's executor thread: a futex wake-up and a
//     context switch per call (0.6 per 1-row GetRows against 0.05 for the
//     floor server; BENCHMARKS.md at faa88c3, section 9: git show
//     faa88c3:BENCHMARKS.md). Only gRPC's "not API" InternalInlineable()
//     hook makes a reactor of our own inline;
//   - its CallScope lives in the call's context (CallContext), which the
//     server's CallContextAllocator (grpc::ContextAllocator, set with
//     ServerBuilder::SetContextAllocator) creates for each call and deletes
//     when gRPC has run OnDone: the moment a reactor of our own would have
//     been deleted, so the drain's live-call count is unchanged.
//
// Usage, in a handler of a service on a server built with
// builder.SetContextAllocator(std::make_unique<CallContextAllocator>()):
//   UnaryCall call(context, &counters, &stats, Method::kGetRows);
//   ...
//   return call.Finish(status, response->Length());  // now or on any thread
//
// A UnaryCall is a handle (two pointers): copy it into the lambdas that
// finish the call later. Finish exactly once; the handle is dangling after.
#ifndef POSENC_SERVER_UNARY_CALL_H_
#define POSENC_SERVER_UNARY_CALL_H_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "server/call_scope.h"
#include "server/method_stats.h"

namespace posenc {

// A call's context, holding a unary call's CallScope until gRPC is done
// with the call. Created and deleted by CallContextAllocator only.
class CallContext final : public grpc::CallbackServerContext {
 private:
  friend class UnaryCall;
  std::optional<CallScope> scope_;
};

// Gives every callback call of the server a CallContext, and every call of
// an unregistered method (gRPC's own UNIMPLEMENTED answer) a
// GenericCallbackServerContext; deletes either once gRPC has run the call's
// OnDone (that ends a unary call's CallScope).
//
// Both are allocated here because gRPC 1.51 hands every context of a server
// with an allocator back to that allocator's Release, including one it made
// itself when NewGenericCallbackServerContext returned nullptr (it lives
// inside gRPC's request object): deleting that one freed an interior
// pointer, and one call of an unknown method aborted the server (found by
// fuzz_get_table; RpcTest.UnknownMethod_UnimplementedAndServerStaysUp).
// Thread-safe (stateless).
class CallContextAllocator final : public grpc::ContextAllocator {
 public:
  grpc::CallbackServerContext* NewCallbackServerContext() override;
  grpc::GenericCallbackServerContext* NewGenericCallbackServerContext()
      override;
  void Release(grpc::CallbackServerContext* context) override;
  void Release(grpc::GenericCallbackServerContext* context) override;
};

class UnaryCall {
 public:
  // Begins the call's CallScope in its context and takes the context's
  // DefaultReactor. Precondition: `context` came from a
  // CallContextAllocator (checked in debug builds), on the handler's
  // thread, at most once per call; `counters` and `stats` outlive the call.
  UnaryCall(grpc::CallbackServerContext* context, CallCounters* counters,
            MethodStats* stats, Method method);

  // Ends the call's scope with `status` (counted, logged if failed,
  // converted) and finishes the call; returns its reactor, for a handler to
  // return.
  grpc::ServerUnaryReactor* Finish(const absl::Status& status,
                                   uint64_t bytes_sent) const;
  // For a handler whose call finishes later, on another thread.
  grpc::ServerUnaryReactor* reactor() const { return reactor_; }
  // The call's scope, for a handler that ends it before Finish (GetStats).
  CallScope& scope() const { return *scope_; }

 private:
  CallScope* scope_;
  grpc::ServerUnaryReactor* reactor_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_UNARY_CALL_H_
