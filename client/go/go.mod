module posenc/client/go

go 1.19

// The versions Debian 12 ships. Offline builds use GOPATH mode against
// /usr/share/gocode instead of these (see go.sh and README.md).
require (
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
