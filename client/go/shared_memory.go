package posenc

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/grpc/codes"

	pb "posenc/client/go/posencv1"
)

// mapOutcome says what Table does after mapShared.
type mapOutcome int

const (
	shmDone          mapOutcome = iota // the tensor, or the error, is the answer
	shmFallback                        // ask again for the bytes
	shmFallbackNoDir                   // the same, and this client stops asking for shared memory
)

// mapShared follows docs/shared_memory.md "What a client does": open the
// file without following links, check its fstat against the server's, map it
// read-only, check XXH64 over the whole mapping. A file that cannot be opened
// (or mapped) is a fallback to the bytes, never an error; a file that is not
// the server's is DATA_LOSS.
func mapShared(s *pb.SharedMemoryTensor) (*Tensor, mapOutcome, error) {
	size := ElementSize(s.GetDtype())
	count := uint64(1)
	for _, n := range s.GetShape() {
		count *= uint64(n)
	}
	if size == 0 || count*uint64(size) != s.GetSizeBytes() || s.GetFileBytes() == 0 ||
		s.GetOffset() > s.GetFileBytes() || s.GetSizeBytes() > s.GetFileBytes()-s.GetOffset() {
		return nil, shmDone, &Error{Code: codes.Internal, Message: fmt.Sprintf(
			"shared memory %s: shape %v of %v, %d bytes at offset %d of a %d-byte file do not fit",
			s.GetPath(), s.GetShape(), s.GetDtype(), s.GetSizeBytes(), s.GetOffset(), s.GetFileBytes())}
	}
	fd, err := syscall.Open(s.GetPath(), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		// Another host or mount namespace has no such directory: stop asking.
		// A missing file alone (just evicted) changes nothing.
		dir, err := syscall.Open(filepath.Dir(s.GetPath()), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, shmFallbackNoDir, nil
		}
		syscall.Close(dir)
		return nil, shmFallback, nil
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, shmFallback, nil
	}
	var differ []string
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		differ = append(differ, fmt.Sprintf("not a regular file (mode %o)", st.Mode))
	}
	if st.Uid != s.GetOwnerUid() {
		differ = append(differ, fmt.Sprintf("owner uid %d, want %d", st.Uid, s.GetOwnerUid()))
	}
	if st.Ino != s.GetInode() {
		differ = append(differ, fmt.Sprintf("inode %d, want %d", st.Ino, s.GetInode()))
	}
	if st.Size != int64(s.GetFileBytes()) {
		differ = append(differ, fmt.Sprintf("size %d bytes, want %d", st.Size, s.GetFileBytes()))
	}
	if st.Mode&0o222 != 0 {
		differ = append(differ, fmt.Sprintf("writable (mode %o)", st.Mode&0o7777))
	}
	if len(differ) > 0 {
		return nil, shmDone, &Error{Code: codes.DataLoss, Message: fmt.Sprintf(
			"shared memory %s is not the server's file: %s", s.GetPath(), strings.Join(differ, ", "))}
	}
	mapping, err := syscall.Mmap(fd, 0, int(s.GetFileBytes()), syscall.PROT_READ,
		syscall.MAP_SHARED|syscall.MAP_POPULATE) // every page is read next, for XXH64
	if err != nil {
		return nil, shmFallback, nil
	}
	if sum := xxhash.Sum64(mapping); sum != s.GetFileXxh64() {
		syscall.Munmap(mapping)
		return nil, shmDone, &Error{Code: codes.DataLoss, Message: fmt.Sprintf(
			"shared memory %s: XXH64 %016x, want %016x", s.GetPath(), sum, s.GetFileXxh64())}
	}
	end := s.GetOffset() + s.GetSizeBytes()
	return &Tensor{DType: s.GetDtype(), Shape: s.GetShape(),
		Data: mapping[s.GetOffset():end:end], mapping: mapping}, shmDone, nil
}

// Close unmaps a tensor that Table mapped from the server's shared memory
// (WithSharedMemory); its Data must not be read after (it faults). Slices
// decoded from it (Float32, Float64, Bits16, Widen) are copies and stay
// valid. A tensor of received bytes needs no Close (it is a no-op). Close
// is idempotent, not safe concurrently with reads of Data.
func (t *Tensor) Close() error {
	if t.mapping == nil {
		return nil
	}
	err := syscall.Munmap(t.mapping)
	t.mapping, t.Data = nil, nil
	return err
}

// Mapped reports whether Data is a read-only mapping of the server's
// shared-memory file (until Close), rather than received bytes.
func (t *Tensor) Mapped() bool { return t.mapping != nil }
