// posenc is not published on any host, so this path is not one `go get`
// can fetch, and does not pretend to be: it names where the code lives
// (client/go of the posenc repository), and its dotless first element makes
// Go refuse to look it up anywhere. Use it from a copy of this directory
// with `replace posenc/client/go => ./path/to/client/go` in your go.mod
// (module mode), or at $GOPATH/src/posenc/client/go (GOPATH mode): see
// README.md.
module posenc/client/go

go 1.19

// The versions Debian 12 ships. In this repository the client builds in
// GOPATH mode against /usr/share/gocode (go.sh); ctest also builds it in
// module mode from a vendor/ of those packages (go_client_module_mode).
require (
	github.com/cespare/xxhash/v2 v2.1.1
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
