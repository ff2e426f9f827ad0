package posenc

import (
	"math"
	"testing"

	pb "posenc/client/go/posencv1"
)

func TestHalfToFloat64DecodesExactly(t *testing.T) {
	for bits, want := range map[uint16]float64{
		0x3c00: 1, 0xbc00: -1, 0x0001: math.Ldexp(1, -24), 0x3555: 0.333251953125,
		0x7bff: 65504, 0x0000: 0,
	} {
		if got := HalfToFloat64(bits); got != want {
			t.Errorf("HalfToFloat64(%#04x) = %v, want %v", bits, got, want)
		}
	}
}

func TestBFloat16ToFloat32DecodesExactly(t *testing.T) {
	for bits, want := range map[uint16]float32{
		0x3f80: 1, 0xbf40: -0.75, 0x0001: float32(math.Ldexp(1, -133)), 0x7f80: float32(math.Inf(1)),
		0x3eab: 0.333984375, 0x8000: float32(math.Copysign(0, -1)),
	} {
		if got := BFloat16ToFloat32(bits); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("BFloat16ToFloat32(%#04x) = %v, want %v", bits, got, want)
		}
	}
}

func TestFromProtoRejectsSizeMismatch(t *testing.T) {
	_, err := fromProto(&pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []uint32{2, 2}, Data: make([]byte, 12)})
	if e, ok := err.(*Error); !ok || CodeName(e.Code) != "INTERNAL" {
		t.Fatalf("err = %v, want INTERNAL *Error", err)
	}
}

func TestFloat32DecodesLittleEndian(t *testing.T) {
	tensor, err := fromProto(&pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []uint32{2},
		Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tensor.Float32()
	if err != nil || got[0] != 1 || got[1] != -2 {
		t.Fatalf("Float32() = %v, %v; want [1 -2]", got, err)
	}
	if _, err := tensor.Float64(); err == nil {
		t.Error("Float64() of a float32 tensor succeeded")
	}
	if w := tensor.Widen(); w[0] != 1 || w[1] != -2 {
		t.Errorf("Widen() = %v", w)
	}
}
