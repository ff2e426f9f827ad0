package posenc

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/grpc/codes"

	pb "posenc/client/go/posencv1"
)

// Tensor is a received table, batch or row: raw little-endian row-major
// bytes plus dtype and shape ([rows, width], or [width] for one row; width is Spec.Width()).
// A table mapped from shared memory (WithSharedMemory, Mapped) has read-only
// Data, valid until Close.
type Tensor struct {
	DType pb.DType
	Shape []uint32
	Data  []byte

	mapping []byte // the whole mapped file, or nil
}

// ElementSize is the bytes per element of dtype (0 if unknown).
func ElementSize(dtype pb.DType) int {
	switch dtype {
	case pb.DType_DTYPE_FLOAT32:
		return 4
	case pb.DType_DTYPE_FLOAT64:
		return 8
	case pb.DType_DTYPE_FLOAT16, pb.DType_DTYPE_BFLOAT16:
		return 2
	}
	return 0
}

func fromProto(t *pb.Tensor) (*Tensor, error) {
	size := ElementSize(t.GetDtype())
	if size == 0 {
		return nil, &Error{Code: codes.Internal, Message: fmt.Sprintf("unknown dtype %v", t.GetDtype())}
	}
	count := uint64(1)
	for _, n := range t.GetShape() {
		count *= uint64(n)
	}
	if count*uint64(size) != uint64(len(t.GetData())) {
		return nil, &Error{Code: codes.Internal, Message: fmt.Sprintf(
			"shape %v of %v needs %d bytes, got %d", t.GetShape(), t.GetDtype(),
			count*uint64(size), len(t.GetData()))}
	}
	return &Tensor{DType: t.GetDtype(), Shape: t.GetShape(), Data: t.GetData()}, nil
}

func (t *Tensor) check(dtype pb.DType) error {
	if t.DType != dtype {
		return fmt.Errorf("posenc: tensor is %v, not %v", t.DType, dtype)
	}
	return nil
}

// Float32 decodes a DTYPE_FLOAT32 tensor.
func (t *Tensor) Float32() ([]float32, error) {
	if err := t.check(pb.DType_DTYPE_FLOAT32); err != nil {
		return nil, err
	}
	out := make([]float32, len(t.Data)/4)
	for k := range out {
		out[k] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*k:]))
	}
	return out, nil
}

// Float64 decodes a DTYPE_FLOAT64 tensor.
func (t *Tensor) Float64() ([]float64, error) {
	if err := t.check(pb.DType_DTYPE_FLOAT64); err != nil {
		return nil, err
	}
	out := make([]float64, len(t.Data)/8)
	for k := range out {
		out[k] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*k:]))
	}
	return out, nil
}

// Bits16 returns the raw bits of a DTYPE_FLOAT16 or DTYPE_BFLOAT16 tensor.
func (t *Tensor) Bits16() ([]uint16, error) {
	if t.DType != pb.DType_DTYPE_FLOAT16 && t.DType != pb.DType_DTYPE_BFLOAT16 {
		return nil, fmt.Errorf("posenc: tensor is %v, not a 16-bit type", t.DType)
	}
	out := make([]uint16, len(t.Data)/2)
	for k := range out {
		out[k] = binary.LittleEndian.Uint16(t.Data[2*k:])
	}
	return out, nil
}

// Widen returns every element as float64, exactly, whatever the dtype.
func (t *Tensor) Widen() []float64 {
	size := ElementSize(t.DType)
	out := make([]float64, len(t.Data)/size)
	for k := range out {
		b := t.Data[size*k:]
		switch t.DType {
		case pb.DType_DTYPE_FLOAT32:
			out[k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case pb.DType_DTYPE_FLOAT64:
			out[k] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case pb.DType_DTYPE_FLOAT16:
			out[k] = HalfToFloat64(binary.LittleEndian.Uint16(b))
		case pb.DType_DTYPE_BFLOAT16:
			out[k] = float64(BFloat16ToFloat32(binary.LittleEndian.Uint16(b)))
		}
	}
	return out
}

// BFloat16ToFloat32 decodes bfloat16 bits exactly: they are the upper half
// of a float32's.
func BFloat16ToFloat32(bits uint16) float32 { return math.Float32frombits(uint32(bits) << 16) }

// HalfToFloat64 decodes IEEE binary16 bits exactly (float32(HalfToFloat64(b))
// is exact too).
func HalfToFloat64(bits uint16) float64 {
	sign := 1.0
	if bits&0x8000 != 0 {
		sign = -1
	}
	exp := int(bits>>10) & 0x1f
	frac := float64(bits & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}
