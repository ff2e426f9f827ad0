package posenc

import (
	"math"
	"testing"

	pb "posenc/client/go/posencv1"
)

// Expected strings are JavaScript's String(x).
func TestFormatBaseMatchesJavaScriptString(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{10000, "10000"}, {0.1, "0.1"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"},
		{123456789012345680000, "123456789012345680000"}, {5e-324, "5e-324"},
		{1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {1e6, "1000000"},
		{500.5, "500.5"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{1.0000000000000002, "1.0000000000000002"}, {0.30000000000000004, "0.30000000000000004"},
		{-2.5, "-2.5"}, {math.Copysign(0, -1), "0"}, {math.Inf(1), "Infinity"}, {math.NaN(), "NaN"},
		{1e16, "10000000000000000"}, {123.456e-10, "1.23456e-8"},
	} {
		if got := FormatBase(c.x); got != c.want {
			t.Errorf("FormatBase(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestRoutingKeyNormalisesDefaultsAndIgnoresMaxLen(t *testing.T) {
	unset := Spec{D: 512, MaxLen: 100}
	explicit := Spec{D: 512, MaxLen: 9999, Base: 10000, DType: pb.DType_DTYPE_FLOAT32,
		Layout: pb.Layout_LAYOUT_INTERLEAVED, Frequency: pb.Frequency_FREQUENCY_PAPER}
	want := "d=512;base=10000;dtype=float32;layout=interleaved;freq=paper"
	if unset.RoutingKey() != want || explicit.RoutingKey() != want {
		t.Errorf("keys %q, %q; want %q", unset.RoutingKey(), explicit.RoutingKey(), want)
	}
	other := Spec{D: 64, MaxLen: 7, Base: 500.5, DType: pb.DType_DTYPE_BFLOAT16,
		Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN, Frequency: pb.Frequency_FREQUENCY_T2T}
	if got := other.RoutingKey(); got != "d=64;base=500.5;dtype=bfloat16;layout=concat_cos_sin;freq=t2t" {
		t.Errorf("key %q", got)
	}
	if got := (Spec{D: 3, DType: 9, Layout: 8, Frequency: 7}).RoutingKey(); got != "d=3;base=10000;dtype=9;layout=8;freq=7" {
		t.Errorf("unknown enums: %q", got)
	}
}
