#include "server/unary_call.h"

#include <cassert>
#include <typeinfo>

namespace posenc {

grpc::CallbackServerContext* CallContextAllocator::NewCallbackServerContext() {
  return new CallContext();
}

grpc::GenericCallbackServerContext*
CallContextAllocator::NewGenericCallbackServerContext() {
  return new grpc::GenericCallbackServerContext();
}

// A CallContext, or (the generic handler's type is CallbackServerContext) a
// GenericCallbackServerContext: both made above; the destructor is virtual.
void CallContextAllocator::Release(grpc::CallbackServerContext* context) {
  delete context;
}

void CallContextAllocator::Release(
    grpc::GenericCallbackServerContext* context) {
  delete context;
}

UnaryCall::UnaryCall(grpc::CallbackServerContext* context,
                     CallCounters* counters, MethodStats* stats,
                     Method method) {
  assert(typeid(*context) == typeid(CallContext));
  std::optional<CallScope>& scope = static_cast<CallContext*>(context)->scope_;
  scope.emplace(context, counters, stats, method);
  scope_ = &*scope;
  reactor_ = context->DefaultReactor();
}

grpc::ServerUnaryReactor* UnaryCall::Finish(const absl::Status& status,
                                            uint64_t bytes_sent) const {
  // The reactor may end the call at once (inline OnDone, then Release):
  // take it before the scope goes.
  grpc::ServerUnaryReactor* reactor = reactor_;
  reactor->Finish(scope_->End(status, bytes_sent));
  return reactor;
}

}  // namespace posenc
