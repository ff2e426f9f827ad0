package posenc

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	pb "posenc/client/go/posencv1"
)

// Spec names a table: rows 0..MaxLen-1 of Width() channels each. Zero values
// mean the server defaults: Base 10000, float32, interleaved, paper
// frequencies, no RoPE scaling, PartialRotaryFactor 1.
//
// RoPE: Layout pb.Layout_LAYOUT_ROTATE_HALF (HF) or
// pb.Layout_LAYOUT_INTERLEAVED_PAIRS (GPT-J), rows [cos | sin] of
// 2*d_rot channels (d_rot = floor(D * PartialRotaryFactor), or D), and Rope
// the scheme with HF's parameters (nil: plain sinusoid). Rope is sent as is
// (the spec keeps a pointer to it; do not change it during a call).
type Spec struct {
	D                   uint32
	MaxLen              uint32
	Base                float64
	DType               pb.DType
	Layout              pb.Layout
	Frequency           pb.Frequency
	Rope                *pb.RopeScaling
	PartialRotaryFactor float64
	// Grid makes the spec a grid table (the 2D/3D sin-cos position
	// embeddings of MAE, diffusers, timm, CogVideoX; docs/encodings.md "Grid
	// tables"): rows are the grid's points, D the sum of its axes' channels,
	// MaxLen 0 (the grid's rows) or that count. nil: positions 0..MaxLen-1.
	// Sent as is, like Rope.
	Grid *pb.GridSpec
}

func (s Spec) proto() *pb.TableSpec {
	return &pb.TableSpec{
		D:                   s.D,
		Base:                s.Base,
		MaxLen:              s.MaxLen,
		Dtype:               s.DType,
		Layout:              s.Layout,
		Frequency:           s.Frequency,
		Rope:                s.Rope,
		PartialRotaryFactor: s.PartialRotaryFactor,
		Grid:                s.Grid,
	}
}

// Width is the number of channels per row the server returns for a valid
// spec: D, or floor(D * PartialRotaryFactor) when that is set, and twice that
// for the RoPE layouts.
func (s Spec) Width() uint32 {
	w := s.D
	if s.PartialRotaryFactor != 0 {
		w = uint32(math.Floor(float64(s.D) * s.PartialRotaryFactor))
	}
	if s.Layout == pb.Layout_LAYOUT_ROTATE_HALF || s.Layout == pb.Layout_LAYOUT_INTERLEAVED_PAIRS {
		w *= 2
	}
	return w
}

// RoutingKeyHeader is the metadata key of a table call's routing key.
const RoutingKeyHeader = "x-posenc-table"

// RoutingKey is the key every table call sends as x-posenc-table metadata:
// d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>. Every
// field but MaxLen, defaults resolved (Base 0 -> 10000), Base written by
// FormatBase, unknown enum values as numbers; a PartialRotaryFactor in
// (0, 1] folded into d (floor(D * factor), the rotary dimension), any other
// non-zero one appended as ";prf=<x>"; and, when Rope has any field set,
// ";rope=<type>" followed by each non-zero Rope field as ";<name>=<value>"
// in field-number order (lists as FNV1a64Hex). See posenc.proto.
func (s Spec) RoutingKey() string {
	base := s.Base
	if base == 0 {
		base = 10000
	}
	// A PartialRotaryFactor in (0, 1] is the same table as D = the rotary
	// dimension without it (the server resolves it so): fold it into D.
	prf := s.PartialRotaryFactor
	foldPrf := prf > 0 && prf <= 1
	d := s.D
	if foldPrf {
		d = uint32(math.Floor(float64(s.D) * prf))
	}
	key := "d=" + strconv.FormatUint(uint64(d), 10) +
		";base=" + FormatBase(base) +
		";dtype=" + enumName(int32(s.DType), "float32", "float32", "float64", "float16", "bfloat16") +
		";layout=" + enumName(int32(s.Layout), "interleaved", "interleaved", "concat_sin_cos", "concat_cos_sin", "rotate_half", "interleaved_pairs", "rotation_matrix") +
		";freq=" + enumName(int32(s.Frequency), "paper", "paper", "t2t")
	if prf != 0 && !foldPrf { // out of range: the server rejects it
		key += ";prf=" + FormatBase(prf)
	}
	if s.Rope != nil {
		key += ropeKeySuffix(s.Rope)
	}
	if s.Grid != nil {
		key += gridKeySuffix(s.Grid)
	}
	return key
}

// gridKeySuffix is ";grid=<size>:<channels>:<first>:<num>/<den>,...;order=
// ...;sin_cos=...;extra=..." with the position fraction's zeros taken as 1
// and reduced by its gcd, order the channel order or 0,1,... when unset.
func gridKeySuffix(g *pb.GridSpec) string {
	gcd := func(a, b uint32) uint32 {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	axes := make([]string, 0, len(g.GetAxes()))
	for _, a := range g.GetAxes() {
		num, den := a.GetPositionNumerator(), a.GetPositionDenominator()
		if num == 0 {
			num = 1
		}
		if den == 0 {
			den = 1
		}
		c := gcd(num, den)
		axes = append(axes, fmt.Sprintf("%d:%d:%d:%d/%d", a.GetSize(), a.GetChannels(),
			a.GetFirstIndex(), num/c, den/c))
	}
	order := make([]string, 0, len(g.GetAxes()))
	if len(g.GetChannelOrder()) == 0 {
		for k := range g.GetAxes() {
			order = append(order, strconv.Itoa(k))
		}
	} else {
		for _, a := range g.GetChannelOrder() {
			order = append(order, strconv.FormatUint(uint64(a), 10))
		}
	}
	return ";grid=" + strings.Join(axes, ",") + ";order=" + strings.Join(order, ",") +
		";sin_cos=" + enumName(int32(g.GetSinCos()), "per_axis", "per_axis", "grouped") +
		";extra=" + strconv.FormatUint(uint64(g.GetExtraZeroRows()), 10)
}

func ropeKeySuffix(r *pb.RopeScaling) string {
	var b strings.Builder
	double := func(name string, v float64) {
		if v != 0 { // NaN is non-zero
			b.WriteString(";" + name + "=" + FormatBase(v))
		}
	}
	integer := func(name string, v uint32) {
		if v != 0 {
			b.WriteString(";" + name + "=" + strconv.FormatUint(uint64(v), 10))
		}
	}
	list := func(name string, v []float64) {
		if len(v) != 0 {
			b.WriteString(";" + name + "=" + FNV1a64Hex(v))
		}
	}
	double("factor", r.GetFactor())
	integer("original_max_position_embeddings", r.GetOriginalMaxPositionEmbeddings())
	integer("seq_len", r.GetSeqLen())
	double("beta_fast", r.GetBetaFast())
	double("beta_slow", r.GetBetaSlow())
	double("mscale", r.GetMscale())
	double("mscale_all_dim", r.GetMscaleAllDim())
	if r.Truncate != nil {
		b.WriteString(";truncate=" + strconv.FormatBool(*r.Truncate))
	}
	double("attention_factor", r.GetAttentionFactor())
	double("low_freq_factor", r.GetLowFreqFactor())
	double("high_freq_factor", r.GetHighFreqFactor())
	list("short_factor", r.GetShortFactor())
	list("long_factor", r.GetLongFactor())
	if r.GetType() == pb.RopeType_ROPE_TYPE_UNSPECIFIED && b.Len() == 0 {
		return ""
	}
	return ";rope=" + enumName(int32(r.GetType()), "default", "default", "linear", "dynamic", "yarn", "llama3", "longrope") + b.String()
}

// FNV1a64Hex is 16 lowercase hex digits of the FNV-1a 64-bit hash of the
// values' little-endian float64 bytes (the routing key's short_factor and
// long_factor).
func FNV1a64Hex(values []float64) string {
	h := fnv.New64a()
	var buf [8]byte
	for _, v := range values {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
		h.Write(buf[:])
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// enumName is names[v], or v in decimal when it has no name.
func enumName(v int32, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}

// FormatBase writes x as JavaScript's String(x) does (ECMAScript
// Number::toString): shortest round-trip digits, plain notation for decimal
// exponents -7 < n <= 21, else d.ddde+NN / d.ddde-NN.
func FormatBase(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case x == 0:
		return "0"
	case x < 0:
		return "-" + FormatBase(-x)
	case math.IsInf(x, 1):
		return "Infinity"
	}
	text := strconv.FormatFloat(x, 'e', -1, 64) // "d.ddde+XX"
	e := strings.IndexByte(text, 'e')
	digits := strings.Replace(text[:e], ".", "", 1)
	exp, _ := strconv.Atoi(text[e+1:])
	k, n := len(digits), exp+1 // x = 0.digits * 10^n
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	mantissa := digits
	if k > 1 {
		mantissa = digits[:1] + "." + digits[1:]
	}
	exponent := n - 1
	if exponent < 0 {
		exponent = -exponent
	}
	return mantissa + "e" + sign + strconv.Itoa(exponent)
}

// EncodingSpec names an encoding of real-valued points (Encode): diffusion
// timesteps, flow-matching times, NeRF coordinates. Fields as the proto's
// EncodingSpec; zero values mean the server defaults: float32, interleaved,
// FREQUENCY_SCHEME_EXPONENTIAL, MaxPeriod 10000, Shift 0, Scale 1,
// Coordinates 1.
//
// Exponential: f_i = MaxPeriod^(-i / (half - Shift)), half = Dim / 2 (PadOddDim
// for an odd Dim). Octaves: f_k = 2 pi 2^(e_k), e_k = linspace(MinFreqExp,
// MaxFreqExp, NumFrequencies). Every angle is Scale * x * f. The server checks
// the values (INVALID_ARGUMENT naming the field).
//
// Multi-axis RoPE (docs/encodings.md "Multi-axis RoPE"): AxesDim (FLUX
// EmbedND's axes_dim, e.g. {16, 56, 56}) or MropeSection (Qwen2-VL's, e.g.
// {16, 24, 24}, with Dim = head_dim; MropeInterleaved for Qwen3-VL). A point
// is then one id per axis (Coordinates 0 means the number of axes), and Layout
// may also be LAYOUT_ROTATE_HALF, LAYOUT_INTERLEAVED_PAIRS or
// LAYOUT_ROTATION_MATRIX (FLUX: shape [points, K, 2, 2]).
type EncodingSpec struct {
	Dim              uint32
	DType            pb.DType
	Layout           pb.Layout
	Frequency        pb.FrequencyScheme
	MaxPeriod        float64
	Shift            float64
	Scale            float64
	PadOddDim        bool
	NumFrequencies   uint32
	MinFreqExp       float64
	MaxFreqExp       float64
	Coordinates      uint32
	IncludeInput     bool
	AxesDim          []uint32
	MropeSection     []uint32
	MropeInterleaved bool
}

func (s EncodingSpec) proto() *pb.EncodingSpec {
	return &pb.EncodingSpec{
		Dim:              s.Dim,
		Dtype:            s.DType,
		Layout:           s.Layout,
		Frequency:        s.Frequency,
		MaxPeriod:        s.MaxPeriod,
		Shift:            s.Shift,
		Scale:            s.Scale,
		PadOddDim:        s.PadOddDim,
		NumFrequencies:   s.NumFrequencies,
		MinFreqExp:       s.MinFreqExp,
		MaxFreqExp:       s.MaxFreqExp,
		Coordinates:      s.Coordinates,
		IncludeInput:     s.IncludeInput,
		AxesDim:          s.AxesDim,
		MropeSection:     s.MropeSection,
		MropeInterleaved: s.MropeInterleaved,
	}
}

// Width is the number of channels per row the server returns for a valid
// spec: 2 * Coordinates * half, plus 1 with PadOddDim, plus Coordinates with
// IncludeInput (half: Dim / 2, or NumFrequencies for octaves).
func (s EncodingSpec) Width() uint32 {
	if len(s.AxesDim) > 0 || len(s.MropeSection) > 0 {
		// K pairs: 2K values, or 4K in the RoPE layouts and rotation matrices.
		var k uint32
		if len(s.AxesDim) > 0 {
			for _, n := range s.AxesDim {
				k += n / 2
			}
		} else {
			k = s.Dim / 2
		}
		switch s.Layout {
		case pb.Layout_LAYOUT_ROTATE_HALF, pb.Layout_LAYOUT_INTERLEAVED_PAIRS,
			pb.Layout_LAYOUT_ROTATION_MATRIX:
			return 4 * k
		}
		return 2 * k
	}
	coordinates := s.Coordinates
	if coordinates == 0 {
		coordinates = 1
	}
	half := s.Dim / 2
	if s.Frequency == pb.FrequencyScheme_FREQUENCY_SCHEME_OCTAVES {
		half = s.NumFrequencies
	}
	w := 2 * coordinates * half
	if s.PadOddDim {
		w++
	}
	if s.IncludeInput {
		w += coordinates
	}
	return w
}
