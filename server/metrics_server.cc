#include "server/metrics_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace posenc {

MetricsHttpServer::MetricsHttpServer()
    : http_(std::make_unique<httplib::Server>()) {}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::function<std::string()> render) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address must be host:port, got '", listen, "'"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]:9090
  }
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  // httplib's default also sets SO_REUSEPORT, which would let a second
  // server share the port silently: keep only SO_REUSEADDR.
  server->http_->set_socket_options([](auto sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server->http_->Get("/metrics", [render = std::move(render)](
                                     const httplib::Request&,
                                     httplib::Response& response) {
    response.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  if (port == 0) {
    server->port_ = server->http_->bind_to_any_port(host);
  } else if (server->http_->bind_to_port(host, port)) {
    server->port_ = port;
  }
  if (server->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", listen, " for metrics (address in use?)"));
  }
  MetricsHttpServer* self = server.get();
  server->thread_ = std::thread([self] {
    self->http_->listen_after_bind();
    self->returned_ = true;
  });
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (thread_.joinable()) {
    // stop() is a no-op until listen_after_bind has started running.
    while (!http_->is_running() && !returned_) std::this_thread::yield();
    http_->stop();
    thread_.join();
  }
}

}  // namespace posenc
