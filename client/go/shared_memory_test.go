package posenc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/proto"

	pb "posenc/client/go/posencv1"
)

// shmTempDir is a fresh directory under /dev/shm, removed when the test ends.
func shmTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "posenc-go-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// plantFile writes a read-only file and returns the SharedMemoryTensor that
// describes it as the server would: a float32 [2, 4] tensor at offset 64.
func plantFile(t *testing.T, dir string) (*pb.SharedMemoryTensor, []byte) {
	data := make([]byte, 64+32)
	for k := range data {
		data[k] = byte(7 * k)
	}
	path := filepath.Join(dir, "table-0123456789abcdef-fedcba9876543210")
	if err := os.WriteFile(path, data, 0o444); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return &pb.SharedMemoryTensor{Path: path, Offset: 64, Dtype: pb.DType_DTYPE_FLOAT32,
		Shape: []uint32{2, 4}, SizeBytes: 32, FileBytes: uint64(len(data)),
		FileXxh64: xxhash.Sum64(data), OwnerUid: st.Uid, Inode: st.Ino}, data
}

func wantCode(t *testing.T, err error, code string, names ...string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || CodeName(e.Code) != code {
		t.Fatalf("err = %v, want %s *Error", err, code)
	}
	for _, name := range names {
		if !strings.Contains(e.Message, name) {
			t.Errorf("%q does not name %q", e.Message, name)
		}
	}
}

func TestMapSharedFile(t *testing.T) {
	dir := shmTempDir(t)
	s, data := plantFile(t, dir)

	t.Run("ServersFile_MappedTensorIsTheSlice", func(t *testing.T) {
		tensor, outcome, err := mapShared(s)
		if err != nil || outcome != shmDone || !tensor.Mapped() {
			t.Fatalf("mapShared = %v, %v, %v", tensor, outcome, err)
		}
		if !bytes.Equal(tensor.Data, data[64:]) || tensor.DType != pb.DType_DTYPE_FLOAT32 ||
			len(tensor.Shape) != 2 || tensor.Shape[0] != 2 || tensor.Shape[1] != 4 {
			t.Errorf("tensor %v %v differs from the file's bytes [64, 96)", tensor.DType, tensor.Shape)
		}
		if err := tensor.Close(); err != nil || tensor.Mapped() || tensor.Data != nil {
			t.Errorf("Close = %v, mapped %v, data %v", err, tensor.Mapped(), tensor.Data)
		}
		if err := tensor.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})

	t.Run("EachFstatMismatch_DataLossNamingIt", func(t *testing.T) {
		for _, c := range []struct {
			edit func(*pb.SharedMemoryTensor)
			name string
		}{
			{func(m *pb.SharedMemoryTensor) { m.Inode++ }, "inode"},
			{func(m *pb.SharedMemoryTensor) { m.OwnerUid++ }, "owner uid"},
			{func(m *pb.SharedMemoryTensor) { m.FileBytes += 64 }, "size"},
			{func(m *pb.SharedMemoryTensor) { m.FileXxh64++ }, "XXH64"},
		} {
			m := proto.Clone(s).(*pb.SharedMemoryTensor)
			c.edit(m)
			tensor, _, err := mapShared(m)
			if tensor != nil {
				t.Errorf("%s: got a tensor", c.name)
			}
			wantCode(t, err, "DATA_LOSS", c.name, s.Path)
		}
	})

	t.Run("WritableFile_DataLoss", func(t *testing.T) {
		if err := os.Chmod(s.Path, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(s.Path, 0o444)
		_, _, err := mapShared(s)
		wantCode(t, err, "DATA_LOSS", "writable")
	})

	t.Run("Symlink_FallsBackAndKeepsAsking", func(t *testing.T) {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(s.Path, link); err != nil {
			t.Fatal(err)
		}
		m := proto.Clone(s).(*pb.SharedMemoryTensor)
		m.Path = link
		if tensor, outcome, err := mapShared(m); tensor != nil || outcome != shmFallback || err != nil {
			t.Errorf("mapShared(symlink) = %v, %v, %v; want a fallback", tensor, outcome, err)
		}
	})

	t.Run("MissingFile_FallsBackAndKeepsAsking", func(t *testing.T) {
		m := proto.Clone(s).(*pb.SharedMemoryTensor)
		m.Path = filepath.Join(dir, "evicted")
		if tensor, outcome, err := mapShared(m); tensor != nil || outcome != shmFallback || err != nil {
			t.Errorf("mapShared(missing file) = %v, %v, %v; want a fallback", tensor, outcome, err)
		}
	})

	t.Run("MissingDirectory_FallsBackAndStopsAsking", func(t *testing.T) {
		m := proto.Clone(s).(*pb.SharedMemoryTensor)
		m.Path = filepath.Join(dir, "elsewhere", filepath.Base(s.Path))
		if tensor, outcome, err := mapShared(m); tensor != nil || outcome != shmFallbackNoDir || err != nil {
			t.Errorf("mapShared(no directory) = %v, %v, %v; want a fallback that stops asking", tensor, outcome, err)
		}
	})

	t.Run("ShapeOutsideTheFile_Internal", func(t *testing.T) {
		m := proto.Clone(s).(*pb.SharedMemoryTensor)
		m.Offset = 96
		_, _, err := mapShared(m)
		wantCode(t, err, "INTERNAL")
	})
}
