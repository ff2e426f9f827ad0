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
	if got := (Spec{D: 4, Layout: pb.Layout_LAYOUT_ROTATION_MATRIX}).RoutingKey(); got != "d=4;base=10000;dtype=float32;layout=rotation_matrix;freq=paper" {
		t.Errorf("rotation matrix: %q", got)
	}
}

func TestFNV1a64Hex(t *testing.T) {
	if got := FNV1a64Hex(nil); got != "cbf29ce484222325" {
		t.Errorf("empty: %s", got)
	}
	// The same lists and hashes as client/python/tests/test_rope.py.
	short := []float64{1.05, 1.05, 1.05, 1.1, 1.1, 1.2, 1.3, 1.5}
	long := []float64{1.08, 1.1, 1.3, 2.5, 6.0, 12.0, 30.0, 64.0}
	if got := FNV1a64Hex(short); got != "732e9efefed7358c" {
		t.Errorf("short: %s", got)
	}
	if got := FNV1a64Hex(long); got != "84e1c9d8b811ea04" {
		t.Errorf("long: %s", got)
	}
}

func TestRoutingKeyRope(t *testing.T) {
	f := false
	short := []float64{1.05, 1.05, 1.05, 1.1, 1.1, 1.2, 1.3, 1.5}
	long := []float64{1.08, 1.1, 1.3, 2.5, 6.0, 12.0, 30.0, 64.0}
	plain := "d=64;base=10000;dtype=float32;layout=interleaved_pairs;freq=paper"
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{D: 128, MaxLen: 7, Base: 500000, DType: pb.DType_DTYPE_BFLOAT16, Layout: pb.Layout_LAYOUT_ROTATE_HALF,
			Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LLAMA3, Factor: 8, OriginalMaxPositionEmbeddings: 8192,
				LowFreqFactor: 1, HighFreqFactor: 4}},
			"d=128;base=500000;dtype=bfloat16;layout=rotate_half;freq=paper;rope=llama3;factor=8;original_max_position_embeddings=8192;low_freq_factor=1;high_freq_factor=4"},
		{Spec{D: 64, MaxLen: 1, Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS}, plain},
		{Spec{D: 64, MaxLen: 1, Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS, Rope: &pb.RopeScaling{}}, plain},
		{Spec{D: 64, MaxLen: 1, Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS,
			Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_DEFAULT}}, plain + ";rope=default"},
		{Spec{D: 64, MaxLen: 1, Rope: &pb.RopeScaling{Factor: 2}},
			"d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;rope=default;factor=2"},
		{Spec{D: 32, MaxLen: 16, Layout: pb.Layout_LAYOUT_ROTATE_HALF, PartialRotaryFactor: 0.5,
			Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LONGROPE, Factor: 32, OriginalMaxPositionEmbeddings: 4096,
				SeqLen: 8192, ShortFactor: short, LongFactor: long}},
			"d=16;base=10000;dtype=float32;layout=rotate_half;freq=paper;rope=longrope;factor=32;original_max_position_embeddings=4096;seq_len=8192;short_factor=732e9efefed7358c;long_factor=84e1c9d8b811ea04"},
		{Spec{D: 64, MaxLen: 1, Base: 150000, Layout: pb.Layout_LAYOUT_ROTATE_HALF,
			Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_YARN, Factor: 32, OriginalMaxPositionEmbeddings: 4096,
				BetaFast: 32, BetaSlow: 1, Truncate: &f}},
			"d=64;base=150000;dtype=float32;layout=rotate_half;freq=paper;rope=yarn;factor=32;original_max_position_embeddings=4096;beta_fast=32;beta_slow=1;truncate=false"},
		{Spec{D: 8, MaxLen: 1, PartialRotaryFactor: 0.25, Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LINEAR, Factor: 1e-7}},
			"d=2;base=10000;dtype=float32;layout=interleaved;freq=paper;rope=linear;factor=1e-7"},
		{Spec{D: 8, MaxLen: 1, Layout: 9, Rope: &pb.RopeScaling{Type: 17, Mscale: 0.707, MscaleAllDim: 1, AttentionFactor: 1.5}},
			"d=8;base=10000;dtype=float32;layout=9;freq=paper;rope=17;mscale=0.707;mscale_all_dim=1;attention_factor=1.5"},
	} {
		if got := c.spec.RoutingKey(); got != c.want {
			t.Errorf("RoutingKey() = %q\n want %q", got, c.want)
		}
	}
}

func TestWidth(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want uint32
	}{
		{Spec{D: 64}, 64},
		{Spec{D: 64, Layout: pb.Layout_LAYOUT_ROTATE_HALF}, 128},
		{Spec{D: 96, Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS, PartialRotaryFactor: 0.5}, 96},
		{Spec{D: 80, PartialRotaryFactor: 0.25}, 20},
	} {
		if got := c.spec.Width(); got != c.want {
			t.Errorf("%+v: Width() = %d, want %d", c.spec, got, c.want)
		}
	}
}

// The server resolves PartialRotaryFactor into D (floor of the double
// product), so (D, factor) and (rotary D, no factor) share a key.
func TestRoutingKeyFoldsPartialRotaryFactor(t *testing.T) {
	rope := &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LINEAR, Factor: 2}
	for _, c := range []struct {
		d      uint32
		prf    float64
		rotary uint32
	}{{64, 0.5, 32}, {64, 1, 64}, {96, 0.25, 24}, {100, 0.29, 28}} { // 100*0.29 = 28.999999999999996
		folded := Spec{D: c.d, MaxLen: 16, Layout: pb.Layout_LAYOUT_ROTATE_HALF, PartialRotaryFactor: c.prf, Rope: rope}.RoutingKey()
		want := Spec{D: c.rotary, MaxLen: 16, Layout: pb.Layout_LAYOUT_ROTATE_HALF, Rope: rope}.RoutingKey()
		if folded != want {
			t.Errorf("d=%d prf=%v: RoutingKey() = %q, want %q", c.d, c.prf, folded, want)
		}
	}
	if got, want := (Spec{D: 64, MaxLen: 1, PartialRotaryFactor: 1.5}).RoutingKey(),
		"d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;prf=1.5"; got != want {
		t.Errorf("out-of-range factor: RoutingKey() = %q, want %q", got, want)
	}
}

// The proto's grid example (MAE ViT-B/16 with its cls token), as the C++
// and Python clients write it; unset fraction parts and order fold in.
func TestRoutingKeyGrid(t *testing.T) {
	axis := func() *pb.GridSpecAxis { return &pb.GridSpecAxis{Size: 14, Channels: 384} }
	mae := Spec{D: 768, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS, Grid: &pb.GridSpec{
		Axes: []*pb.GridSpecAxis{axis(), axis()}, ChannelOrder: []uint32{1, 0}, ExtraZeroRows: 1}}
	want := "d=768;base=10000;dtype=float32;layout=concat_sin_cos;freq=paper;" +
		"grid=14:384:0:1/1,14:384:0:1/1;order=1,0;sin_cos=per_axis;extra=1"
	if got := mae.RoutingKey(); got != want {
		t.Errorf("MAE key = %q, want %q", got, want)
	}
	a := Spec{D: 64, Grid: &pb.GridSpec{Axes: []*pb.GridSpecAxis{
		{Size: 4, Channels: 32, PositionNumerator: 16, PositionDenominator: 48}, {Size: 6, Channels: 32}},
		SinCos: pb.GridSinCos_GRID_SIN_COS_GROUPED}}
	wantA := "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;" +
		"grid=4:32:0:1/3,6:32:0:1/1;order=0,1;sin_cos=grouped;extra=0"
	if got := a.RoutingKey(); got != wantA {
		t.Errorf("key = %q, want %q", got, wantA)
	}
	if p := mae.proto(); p.GetGrid().GetExtraZeroRows() != 1 || len(p.GetGrid().GetAxes()) != 2 {
		t.Errorf("proto grid = %v", p.GetGrid())
	}
}
