package posenc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "posenc/client/go/posencv1"
)

// acceptLog records accept_shared_memory of each GetTable request.
type acceptLog struct {
	mu     sync.Mutex
	accept []bool
}

func (l *acceptLog) intercept(ctx context.Context, method string, req, reply interface{},
	cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*pb.GetTableRequest); ok {
		l.mu.Lock()
		l.accept = append(l.accept, r.GetAcceptSharedMemory())
		l.mu.Unlock()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// take returns the flags recorded since the last take.
func (l *acceptLog) take() []bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.accept
	l.accept = nil
	return got
}

func sameFlags(got []bool, want ...bool) bool {
	if len(got) != len(want) {
		return false
	}
	for k := range got {
		if got[k] != want[k] {
			return false
		}
	}
	return true
}

func TestSharedMemoryAgainstServer(t *testing.T) {
	shmDir := shmTempDir(t)
	target := startServer(t, "--shm_dir="+shmDir)
	plain, err := Dial(target, WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx := context.Background()
	// dial is a fresh shared-memory client (each starts out asking).
	dial := func(t *testing.T) (*Client, *acceptLog) {
		log := &acceptLog{}
		c, err := Dial(target, WithTimeout(30*time.Second), WithSharedMemory(),
			WithDialOptions(grpc.WithUnaryInterceptor(log.intercept)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, log
	}
	// serverPath is where the server says spec's table lies.
	serverPath := func(t *testing.T, spec Spec) string {
		resp, err := plain.stub.GetTable(ctx, &pb.GetTableRequest{Spec: spec.proto(), AcceptSharedMemory: true})
		if err != nil || resp.GetSharedMemory() == nil {
			t.Fatalf("GetTable(accept_shared_memory) = %v, %v; want shared_memory", resp, err)
		}
		return resp.GetSharedMemory().GetPath()
	}
	// fetch returns the table by both paths, and whether shm mapped it.
	fetch := func(t *testing.T, c *Client, spec Spec) (*Tensor, []byte) {
		got, err := c.Table(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { got.Close() })
		want, err := plain.Table(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if want.Mapped() {
			t.Fatal("a client without WithSharedMemory mapped a table")
		}
		return got, want.Data
	}

	t.Run("EveryDtype_SameBitsByBothPaths", func(t *testing.T) {
		c, log := dial(t)
		for _, dtype := range []pb.DType{pb.DType_DTYPE_FLOAT32, pb.DType_DTYPE_FLOAT64,
			pb.DType_DTYPE_FLOAT16, pb.DType_DTYPE_BFLOAT16} {
			spec := Spec{D: 64, MaxLen: 100, DType: dtype, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}
			got, want := fetch(t, c, spec)
			if !got.Mapped() || !bytes.Equal(got.Data, want) || got.DType != dtype ||
				len(got.Shape) != 2 || got.Shape[0] != 100 || got.Shape[1] != 64 {
				t.Errorf("%v: mapped %v, shape %v, same bytes %v", dtype, got.Mapped(), got.Shape,
					bytes.Equal(got.Data, want))
			}
			if w := got.Widen(); len(w) != 6400 || w[0] != 1 { // position 0: cos 1 first
				t.Errorf("%v: Widen of the mapping = %v...", dtype, w[:1])
			}
		}
		if flags := log.take(); !sameFlags(flags, true, true, true, true) {
			t.Errorf("accept_shared_memory per request = %v, want 4 x true", flags)
		}
		stats, err := c.Stats(ctx)
		if err != nil || stats.GetCache().GetShmFiles() == 0 {
			t.Errorf("stats: shm_files %d, %v; want files", stats.GetCache().GetShmFiles(), err)
		}
	})

	t.Run("MissingFile_BytesAndKeepsAsking", func(t *testing.T) {
		spec := Spec{D: 32, MaxLen: 50}
		path := serverPath(t, spec)
		if err := os.Remove(path); err != nil { // as if evicted just now
			t.Fatal(err)
		}
		c, log := dial(t)
		for k := 0; k < 2; k++ {
			got, want := fetch(t, c, spec)
			if got.Mapped() || !bytes.Equal(got.Data, want) {
				t.Errorf("call %d: mapped %v, same bytes %v; want the bytes", k, got.Mapped(), bytes.Equal(got.Data, want))
			}
		}
		if flags := log.take(); !sameFlags(flags, true, false, true, false) {
			t.Errorf("accept_shared_memory per request = %v, want [true false true false]", flags)
		}
	})

	t.Run("PlantedDirectory_DataLossNamingTheInode", func(t *testing.T) {
		spec := Spec{D: 16, MaxLen: 40, DType: pb.DType_DTYPE_FLOAT64}
		path := serverPath(t, spec)
		dir := filepath.Dir(path)
		// Another directory at the server's name, holding a read-only file of
		// the same name and size (and owner: these tests run as the server's
		// user) with other bytes.
		if err := os.Rename(dir, dir+".moved"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(dir+".moved", dir)
		defer os.RemoveAll(dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		original, err := os.ReadFile(filepath.Join(dir+".moved", filepath.Base(path)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, len(original)), 0o444); err != nil {
			t.Fatal(err)
		}
		c, _ := dial(t)
		got, err := c.Table(ctx, spec)
		if got != nil {
			t.Errorf("got a tensor from a planted file")
		}
		wantCode(t, err, "DATA_LOSS", "inode", path)
		if strings.Contains(err.Error(), "size") || strings.Contains(err.Error(), "owner") {
			t.Errorf("%v names more than the inode", err)
		}
	})

	t.Run("UnopenableDirectory_BytesAndStopsAsking", func(t *testing.T) {
		spec := Spec{D: 8, MaxLen: 30, DType: pb.DType_DTYPE_BFLOAT16}
		dir := filepath.Dir(serverPath(t, spec))
		// Not the server's host: the path's directory is not there.
		if err := os.Rename(dir, dir+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(dir+".away", dir)
		c, log := dial(t)
		for k := 0; k < 2; k++ {
			got, want := fetch(t, c, spec)
			if got.Mapped() || !bytes.Equal(got.Data, want) {
				t.Errorf("call %d: mapped %v, same bytes %v; want the bytes", k, got.Mapped(), bytes.Equal(got.Data, want))
			}
		}
		if flags := log.take(); !sameFlags(flags, true, false, false) {
			t.Errorf("accept_shared_memory per request = %v, want [true false false]", flags)
		}
	})
}
