// TLS and mutual TLS from the server's --tls_* options, with certificates
// made by `openssl` at test time: a CA, a server certificate for
// 127.0.0.1/localhost, a client certificate, and a second ("wrong") CA with
// a client certificate of its own.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/posenc_server.h"
#include "tests/hardening/hardening_util.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class TlsTest : public ::testing::Test {
 protected:
  static std::string Path(const std::string& name) {
    return TestTempPath("tls-" + name);
  }

  static void SetUpTestSuite() {
    const std::string ext = Path("ext.cnf");
    std::string script = absl::StrCat(
        "set -e\ncd '", TestTempPath(""), "'\n", "cat > '", ext, "' <<'EOF'\n",
        "[server]\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
        "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        "[client]\nbasicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
        "EOF\n",
        // A CA: key and self-signed certificate.
        "ca() { openssl req -x509 -newkey ec -pkeyopt "
        "ec_paramgen_curve:prime256v1 -nodes -days 2 -subj \"/CN=$1\" "
        "-keyout tls-$1.key -out tls-$1.pem 2>/dev/null; }\n",
        // A leaf: key, CSR, certificate signed by CA $2 with section $3.
        "leaf() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "-nodes -subj \"/CN=$1\" -keyout tls-$1.key -out tls-$1.csr "
        "2>/dev/null && openssl x509 -req -in tls-$1.csr -CA tls-$2.pem "
        "-CAkey tls-$2.key -CAcreateserial -days 2 -extfile '",
        ext, "' -extensions $3 -out tls-$1.pem 2>/dev/null; }\n",
        "ca ca; ca wrong-ca\n",
        "leaf server ca server; leaf client ca client\n",
        "leaf wrong-client wrong-ca client\n");
    const std::string script_path = Path("make.sh");
    FILE* f = fopen(script_path.c_str(), "w");
    fputs(script.c_str(), f);
    fclose(f);
    ASSERT_EQ(std::system(("bash " + script_path).c_str()), 0)
        << "openssl failed";
  }

  void StartServer(bool mutual) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.cache_bytes = uint64_t{16} << 20;
    options.threads = 2;
    options.grace_seconds = 1;
    options.tls_cert = Path("server.pem");
    options.tls_key = Path("server.key");
    if (mutual) options.tls_client_ca = Path("ca.pem");
    absl::StatusOr<std::unique_ptr<PosencServer>> server =
        PosencServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  // A client trusting `ca` and presenting `client` ("" = no certificate).
  std::unique_ptr<PosencClient> Client(const std::string& ca,
                                       const std::string& client,
                                       const std::string& host = "127.0.0.1") {
    PosencClient::Options options =
        ClientTo(absl::StrCat(host, ":", server_->port()), absl::Seconds(5));
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        TlsCredentials(Path(ca + ".pem"),
                       client.empty() ? "" : Path(client + ".pem"),
                       client.empty() ? "" : Path(client + ".key"));
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    options.credentials = *credentials;
    return std::make_unique<PosencClient>(options);
  }

  std::unique_ptr<PosencServer> server_;
};

TEST_F(TlsTest, Tls_RightCaServes_PlaintextAndWrongCaRefused) {
  StartServer(/*mutual=*/false);
  ExpectStillServing(*Client("ca", ""));
  // Host name checked against the certificate's SAN DNS:localhost.
  ExpectStillServing(*Client("ca", "", "localhost"));

  PosencClient plaintext(
      ClientTo(absl::StrCat("127.0.0.1:", server_->port()), absl::Seconds(5)));
  EXPECT_EQ(plaintext.GetTable(MakeSpec(4, 4)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(Client("wrong-ca", "")->GetTable(MakeSpec(4, 4)).status().code(),
            absl::StatusCode::kUnavailable);
  ExpectStillServing(*Client("ca", ""));
}

TEST_F(TlsTest, MutualTls_ClientCertRequiredAndVerified) {
  StartServer(/*mutual=*/true);
  ExpectStillServing(*Client("ca", "client"));
  EXPECT_EQ(Client("ca", "")->GetTable(MakeSpec(4, 4)).status().code(),
            absl::StatusCode::kUnavailable)
      << "a client without a certificate must be refused";
  EXPECT_EQ(
      Client("ca", "wrong-client")->GetTable(MakeSpec(4, 4)).status().code(),
      absl::StatusCode::kUnavailable)
      << "a certificate from another CA must be refused";
  PosencClient plaintext(
      ClientTo(absl::StrCat("127.0.0.1:", server_->port()), absl::Seconds(5)));
  EXPECT_FALSE(plaintext.CheckHealth().ok());
  ExpectStillServing(*Client("ca", "client"));
}

TEST_F(TlsTest, ServerBinaryAndCli_MutualTlsFromFlags) {
  ServerProcess server(
      {"--tls_cert=" + Path("server.pem"), "--tls_key=" + Path("server.key"),
       "--tls_client_ca=" + Path("ca.pem")},
      "tls-server");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  EXPECT_THAT(server.process().Stderr(), HasSubstr("transport: mutual TLS"));
  auto cli = [&](std::vector<std::string> extra, const std::string& name) {
    std::vector<std::string> argv = {POSENC_CLI_PATH, "health",    "--target",
                                     server.target(), "--timeout", "5"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Subprocess p(argv, Path(name + ".out"), Path(name + ".err"));
    std::optional<int> code = p.Wait(absl::Seconds(20));
    return std::make_pair(code.value_or(-1), p.Stdout() + p.Stderr());
  };
  auto [ok_code, ok_text] =
      cli({"--tls-ca", Path("ca.pem"), "--tls-cert", Path("client.pem"),
           "--tls-key", Path("client.key"), "--tls-server-name", "localhost"},
          "cli-ok");
  EXPECT_EQ(ok_code, 0) << ok_text;
  EXPECT_THAT(ok_text, HasSubstr("SERVING"));
  auto [no_cert_code, no_cert_text] =
      cli({"--tls-ca", Path("ca.pem")}, "cli-nocert");
  EXPECT_EQ(no_cert_code, 1) << no_cert_text;
  EXPECT_THAT(no_cert_text, HasSubstr("UNAVAILABLE"));
  auto [plain_code, plain_text] = cli({}, "cli-plain");
  EXPECT_EQ(plain_code, 1) << plain_text;
  auto [bad_code, bad_text] =
      cli({"--tls-ca", Path("missing.pem")}, "cli-missing");
  EXPECT_EQ(bad_code, 2) << bad_text;
  EXPECT_THAT(bad_text, HasSubstr("missing.pem"));
}

TEST_F(TlsTest, MissingKeyFile_ServerRefusesToStart) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tls_cert = Path("server.pem");
  options.tls_key = Path("nonexistent.key");
  absl::StatusOr<std::unique_ptr<PosencServer>> server =
      PosencServer::Create(options);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("--tls_key: cannot read"));
  options.tls_key = "";
  EXPECT_EQ(PosencServer::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace posenc::testing
