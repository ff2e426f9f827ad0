package posenc

import pb "posenc/client/go/posencv1"

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
