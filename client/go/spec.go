package posenc

import (
	"math"
	"strconv"
	"strings"

	pb "posenc/client/go/posencv1"
)

// Spec names a table: rows 0..MaxLen-1 of D channels each. Zero values mean
// the server defaults: Base 10000, float32, interleaved, paper frequencies.
type Spec struct {
	D         uint32
	MaxLen    uint32
	Base      float64
	DType     pb.DType
	Layout    pb.Layout
	Frequency pb.Frequency
}

func (s Spec) proto() *pb.TableSpec {
	return &pb.TableSpec{
		D:         s.D,
		Base:      s.Base,
		MaxLen:    s.MaxLen,
		Dtype:     s.DType,
		Layout:    s.Layout,
		Frequency: s.Frequency,
	}
}

// RoutingKeyHeader is the metadata key of a table call's routing key.
const RoutingKeyHeader = "x-posenc-table"

// RoutingKey is the key every table call sends as x-posenc-table metadata:
// d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>. Every
// field but MaxLen, defaults resolved (Base 0 -> 10000), Base written by
// FormatBase, unknown enum values as numbers. See posenc.proto.
func (s Spec) RoutingKey() string {
	base := s.Base
	if base == 0 {
		base = 10000
	}
	return "d=" + strconv.FormatUint(uint64(s.D), 10) +
		";base=" + FormatBase(base) +
		";dtype=" + enumName(int32(s.DType), "float32", "float32", "float64", "float16", "bfloat16") +
		";layout=" + enumName(int32(s.Layout), "interleaved", "interleaved", "concat_sin_cos", "concat_cos_sin") +
		";freq=" + enumName(int32(s.Frequency), "paper", "paper", "t2t")
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
