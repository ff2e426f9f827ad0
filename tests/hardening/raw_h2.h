// RawH2Client: a bare HTTP/2 client (cleartext, prior knowledge) on one TCP
// connection to 127.0.0.1, for tests that must send what no gRPC client
// sends on purpose: a stream reset before its DATA frame, HEADERS with
// END_STREAM and no message, a call whose message never comes, oversized
// headers, PINGs without data.
//
// Requests use HPACK literal header fields without indexing and without
// Huffman coding, so the encoder keeps no state. Responses are not decoded:
// a reader thread acknowledges the server's SETTINGS and PINGs and records,
// per stream, how the server ended it (END_STREAM or RST_STREAM), and any
// GOAWAY. Tests read outcomes as the server saw them from its metrics.
//
// Thread safety: the frame writers may be called from one test thread at a
// time (they share a write lock with the reader thread's acknowledgements);
// the Wait* accessors from any thread. Every wait is bounded.
#ifndef POSENC_TESTS_HARDENING_RAW_H2_H_
#define POSENC_TESTS_HARDENING_RAW_H2_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc::testing {

class RawH2Client {
 public:
  enum FrameType : uint8_t {
    kData = 0x0,
    kHeaders = 0x1,
    kRstStream = 0x3,
    kSettings = 0x4,
    kPing = 0x6,
    kGoAway = 0x7,
    kContinuation = 0x9,
  };
  static constexpr uint8_t kEndStream = 0x1;
  static constexpr uint8_t kAck = 0x1;
  static constexpr uint8_t kEndHeaders = 0x4;
  static constexpr uint32_t kCancel = 0x8;
  static constexpr uint32_t kEnhanceYourCalm = 0xb;

  // How the server ended a stream, as far as the client has read.
  enum class StreamEnd { kOpen, kEndStream, kReset };

  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Connects and sends the connection preface and an empty SETTINGS frame.
  explicit RawH2Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 ||
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      return;
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    AppendFrame(out, kSettings, 0, 0, "");
    WriteAll(out);
    reader_ = std::thread([this] { ReadLoop(); });
  }
  ~RawH2Client() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) close(fd_);
  }
  RawH2Client(const RawH2Client&) = delete;
  RawH2Client& operator=(const RawH2Client&) = delete;

  bool connected() const { return fd_ >= 0; }

  // The request headers of a gRPC call of `path` (e.g.
  // "/posenc.v1.PositionalEncoding/GetRows"), then `extra`.
  static Headers GrpcRequest(const std::string& path, Headers extra = {}) {
    Headers headers = {{":method", "POST"},
                       {":scheme", "http"},
                       {":path", path},
                       {":authority", "127.0.0.1"},
                       {"content-type", "application/grpc"},
                       {"te", "trailers"}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return headers;
  }

  // Frame builders: append to `out` (send several in one write with Send).
  // A header block longer than 16 KiB continues in CONTINUATION frames.
  static void AppendHeaders(std::string& out, uint32_t stream,
                            const Headers& headers, bool end_stream) {
    std::string block;
    for (const auto& [name, value] : headers) {
      block.push_back('\0');  // literal without indexing, new name
      AppendHpackString(block, name);
      AppendHpackString(block, value);
    }
    constexpr size_t kMaxFrame = 16384;
    size_t at = 0;
    bool first = true;
    do {
      const size_t n = std::min(kMaxFrame, block.size() - at);
      const bool last = at + n == block.size();
      uint8_t flags = last ? kEndHeaders : 0;
      if (first && end_stream) flags |= kEndStream;
      AppendFrame(out, first ? kHeaders : kContinuation, flags, stream,
                  block.substr(at, n));
      at += n;
      first = false;
    } while (at < block.size());
  }
  // One gRPC message (5-byte prefix, uncompressed) in one DATA frame.
  static void AppendGrpcMessage(std::string& out, uint32_t stream,
                                const std::string& message, bool end_stream) {
    std::string payload(5, '\0');
    const uint32_t n = static_cast<uint32_t>(message.size());
    for (int i = 0; i < 4; ++i)
      payload[1 + i] = static_cast<char>(n >> (24 - 8 * i));
    payload += message;
    AppendFrame(out, kData, end_stream ? kEndStream : 0, stream, payload);
  }
  static void AppendRstStream(std::string& out, uint32_t stream,
                              uint32_t error = kCancel) {
    AppendFrame(out, kRstStream, 0, stream, Be32(error));
  }
  static void AppendPing(std::string& out, uint64_t opaque) {
    std::string payload;
    for (int i = 7; i >= 0; --i)
      payload.push_back(static_cast<char>(opaque >> (8 * i)));
    AppendFrame(out, kPing, 0, 0, payload);
  }

  // Writes `bytes` (frames built with the Append* functions); false if the
  // connection is gone.
  bool Send(const std::string& bytes) { return WriteAll(bytes); }

  // Waits until the server has ended `stream` or `timeout` passed.
  StreamEnd WaitStreamEnd(uint32_t stream, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ended = [&] {
      auto it = ends_.find(stream);
      return (it != ends_.end() && it->second != StreamEnd::kOpen) || eof_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ended), timeout);
    auto it = ends_.find(stream);
    return it == ends_.end() ? StreamEnd::kOpen : it->second;
  }
  // True once the server's SETTINGS arrived and were acknowledged (within
  // `timeout`). gRPC enforces its SETTINGS (e.g. the header list size) only
  // on frames that follow the acknowledgement.
  bool WaitSettingsAcked(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&settings_acked_), timeout);
    return settings_acked_;
  }
  // The error code of the first GOAWAY, once one arrives within `timeout`.
  std::optional<uint32_t> WaitGoAway(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto seen = [&] { return goaway_.has_value() || eof_; };
    mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
    return goaway_;
  }
  // True once the server has closed the connection (within `timeout`).
  bool WaitClosed(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&eof_), timeout);
    return eof_;
  }
  // True if the server sent DATA on `stream` (a response message).
  bool GotData(uint32_t stream) {
    absl::MutexLock lock(&mu_);
    return data_streams_.count(stream) > 0;
  }

 private:
  static std::string Be32(uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (24 - 8 * i));
    return s;
  }
  static void AppendFrame(std::string& out, uint8_t type, uint8_t flags,
                          uint32_t stream, const std::string& payload) {
    const uint32_t n = static_cast<uint32_t>(payload.size());
    out.push_back(static_cast<char>(n >> 16));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n));
    out.push_back(static_cast<char>(type));
    out.push_back(static_cast<char>(flags));
    out += Be32(stream & 0x7fffffffu);
    out += payload;
  }
  // An HPACK string literal, not Huffman-coded: length with a 7-bit prefix.
  static void AppendHpackString(std::string& out, const std::string& s) {
    uint64_t n = s.size();
    if (n < 127) {
      out.push_back(static_cast<char>(n));
    } else {
      out.push_back(static_cast<char>(127));
      n -= 127;
      while (n >= 128) {
        out.push_back(static_cast<char>(0x80 | (n & 0x7f)));
        n >>= 7;
      }
      out.push_back(static_cast<char>(n));
    }
    out += s;
  }

  bool WriteAll(const std::string& bytes) {
    absl::MutexLock lock(&write_mu_);
    if (fd_ < 0) return false;
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n =
          send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }

  void ReadLoop() {
    std::string in;
    char buf[65536];
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        if (stop_ || eof_) return;
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        absl::MutexLock lock(&mu_);
        eof_ = true;
        return;
      }
      in.append(buf, static_cast<size_t>(n));
      size_t at = 0;
      while (in.size() - at >= 9) {
        const auto* h = reinterpret_cast<const uint8_t*>(in.data() + at);
        const uint32_t length = (h[0] << 16) | (h[1] << 8) | h[2];
        if (in.size() - at < 9 + length) break;
        const uint8_t type = h[3], flags = h[4];
        const uint32_t stream =
            ((h[5] & 0x7fu) << 24) | (h[6] << 16) | (h[7] << 8) | h[8];
        const std::string payload = in.substr(at + 9, length);
        at += 9 + length;
        OnFrame(type, flags, stream, payload);
      }
      in.erase(0, at);
    }
  }

  void OnFrame(uint8_t type, uint8_t flags, uint32_t stream,
               const std::string& payload) {
    if (type == kSettings && !(flags & kAck)) {
      std::string ack;
      AppendFrame(ack, kSettings, kAck, 0, "");
      WriteAll(ack);
      absl::MutexLock lock(&mu_);
      settings_acked_ = true;
      return;
    }
    if (type == kPing && !(flags & kAck)) {
      std::string ack;
      AppendFrame(ack, kPing, kAck, 0, payload);
      WriteAll(ack);
      return;
    }
    absl::MutexLock lock(&mu_);
    if (type == kGoAway && !goaway_.has_value() && payload.size() >= 8) {
      const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
      goaway_ = (uint32_t{p[4]} << 24) | (p[5] << 16) | (p[6] << 8) | p[7];
    } else if (type == kRstStream) {
      ends_[stream] = StreamEnd::kReset;
    } else if ((type == kHeaders || type == kData) && stream != 0) {
      if (type == kData) data_streams_.insert({stream, true});
      if (flags & kEndStream) {
        ends_.emplace(stream, StreamEnd::kEndStream);
      }
    }
  }

  int fd_ = -1;
  std::thread reader_;
  absl::Mutex write_mu_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool eof_ ABSL_GUARDED_BY(mu_) = false;
  bool settings_acked_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint32_t> goaway_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, StreamEnd> ends_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, bool> data_streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace posenc::testing

#endif  // POSENC_TESTS_HARDENING_RAW_H2_H_
