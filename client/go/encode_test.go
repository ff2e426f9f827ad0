package posenc

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "posenc/client/go/posencv1"
)

func TestEncodingSpecProtoAndWidth(t *testing.T) {
	nerf := EncodingSpec{Frequency: pb.FrequencyScheme_FREQUENCY_SCHEME_OCTAVES,
		Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS, NumFrequencies: 10, MaxFreqExp: 8,
		Coordinates: 3, IncludeInput: true}
	p := nerf.proto()
	if p.GetFrequency() != pb.FrequencyScheme_FREQUENCY_SCHEME_OCTAVES || p.GetNumFrequencies() != 10 ||
		p.GetMaxFreqExp() != 8 || p.GetCoordinates() != 3 || !p.GetIncludeInput() {
		t.Errorf("nerf proto = %v", p)
	}
	sd := EncodingSpec{Dim: 321, PadOddDim: true, DType: pb.DType_DTYPE_FLOAT16, MaxPeriod: 500.5,
		Shift: 1, Scale: 1000, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}
	p = sd.proto()
	if p.GetDim() != 321 || !p.GetPadOddDim() || p.GetDtype() != pb.DType_DTYPE_FLOAT16 ||
		p.GetMaxPeriod() != 500.5 || p.GetShift() != 1 || p.GetScale() != 1000 ||
		p.GetLayout() != pb.Layout_LAYOUT_CONCAT_COS_SIN {
		t.Errorf("sd proto = %v", p)
	}
	for _, c := range []struct {
		spec EncodingSpec
		want uint32
	}{{EncodingSpec{Dim: 256}, 256}, {sd, 321}, {nerf, 63}, {EncodingSpec{Dim: 8, Coordinates: 2}, 16},
		{EncodingSpec{AxesDim: []uint32{16, 56, 56}, Layout: pb.Layout_LAYOUT_ROTATION_MATRIX}, 256},
		{EncodingSpec{Dim: 128, MropeSection: []uint32{16, 24, 24}, Layout: pb.Layout_LAYOUT_ROTATE_HALF}, 256},
		{EncodingSpec{Dim: 128, MropeSection: []uint32{16, 24, 24}}, 128}} {
		if got := c.spec.Width(); got != c.want {
			t.Errorf("%+v.Width() = %d, want %d", c.spec, got, c.want)
		}
	}
}

// headers records each call's outgoing metadata and the server's initial
// metadata (which echoes the x-posenc-table it received).
type headers struct {
	mu       sync.Mutex
	sent     map[string][]string
	received map[string][]string
}

func (h *headers) intercept(ctx context.Context, method string, req, reply interface{},
	cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	var header metadata.MD
	err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&header))...)
	out, _ := metadata.FromOutgoingContext(ctx)
	name := method[strings.LastIndexByte(method, '/')+1:]
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent[name] = out.Get(RoutingKeyHeader)
	h.received[name] = header.Get(RoutingKeyHeader)
	return err
}

// startServer runs $POSENC_SERVER on 127.0.0.1:0, with flags added, and
// returns its address; it is stopped when the test ends.
func startServer(t *testing.T, flags ...string) string {
	bin := os.Getenv("POSENC_SERVER")
	if bin == "" {
		t.Skip("POSENC_SERVER unset")
	}
	logPath := filepath.Join(t.TempDir(), "server.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--listen=127.0.0.1:0", "--lame_duck_seconds=0",
		"--grace_seconds=1"}, flags...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	re := regexp.MustCompile(`listening on \S+ \(port (\d+)\)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		text, _ := os.ReadFile(logPath)
		if m := re.FindSubmatch(text); m != nil {
			return "127.0.0.1:" + string(m[1])
		}
	}
	text, _ := os.ReadFile(logPath)
	t.Fatalf("server did not start:\n%s", text)
	return ""
}

func TestEncodeAgainstServer(t *testing.T) {
	target := startServer(t)
	h := &headers{sent: map[string][]string{}, received: map[string][]string{}}
	c, err := Dial(target, WithTimeout(30*time.Second),
		WithDialOptions(grpc.WithUnaryInterceptor(h.intercept)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	t.Run("FluxGridEqualsTuplesAndQwenTextIdsAreTableRows", func(t *testing.T) {
		flux := EncodingSpec{AxesDim: []uint32{16, 56, 56}, Layout: pb.Layout_LAYOUT_ROTATION_MATRIX}
		byGrid, err := c.EncodeGrid(ctx, flux, []GridAxis{{0, 0}, {2, 3}, {0, 4}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []float64
		for h := 2; h < 5; h++ {
			for w := 0; w < 4; w++ {
				ids = append(ids, 0, float64(h), float64(w))
			}
		}
		byTuples, err := c.Encode(ctx, flux, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(byGrid.Shape) != 4 || byGrid.Shape[0] != 12 || byGrid.Shape[1] != 64 ||
			!bytes.Equal(byGrid.Data, byTuples.Data) {
			t.Errorf("grid %v differs from tuples %v", byGrid.Shape, byTuples.Shape)
		}
		qwen := EncodingSpec{Dim: 128, MaxPeriod: 1e6, MropeSection: []uint32{16, 24, 24},
			Layout: pb.Layout_LAYOUT_ROTATE_HALF}
		got, err := c.Encode(ctx, qwen, []float64{0, 0, 0, 9, 9, 9})
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.Gather(ctx, Spec{D: 128, MaxLen: 16, Base: 1e6,
			Layout: pb.Layout_LAYOUT_ROTATE_HALF}, []uint32{0, 9})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) {
			t.Errorf("Qwen2-VL text ids differ from the RoPE table's rows")
		}
	})

	t.Run("IntegerPointsAreTheTablesRows", func(t *testing.T) {
		// Shift 0 is FREQUENCY_PAPER's table, shift 1 FREQUENCY_T2T's.
		positions := []uint32{7, 0, 999, 3, 7}
		points := []float64{7, 0, 999, 3, 7}
		for _, dtype := range []pb.DType{pb.DType_DTYPE_FLOAT32, pb.DType_DTYPE_FLOAT64,
			pb.DType_DTYPE_FLOAT16, pb.DType_DTYPE_BFLOAT16} {
			for shift, freq := range []pb.Frequency{pb.Frequency_FREQUENCY_PAPER, pb.Frequency_FREQUENCY_T2T} {
				got, err := c.Encode(ctx, EncodingSpec{Dim: 64, DType: dtype, Shift: float64(shift),
					Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}, points)
				if err != nil {
					t.Fatal(err)
				}
				want, err := c.Gather(ctx, Spec{D: 64, MaxLen: 1000, DType: dtype,
					Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN, Frequency: freq}, positions)
				if err != nil {
					t.Fatal(err)
				}
				if got.DType != dtype || len(got.Shape) != 2 || got.Shape[0] != 5 || got.Shape[1] != 64 ||
					!bytes.Equal(got.Data, want.Data) {
					t.Errorf("%v shift %d: Encode %v %v differs from GetRows", dtype, shift, got.DType, got.Shape)
				}
			}
		}
	})

	t.Run("NerfPoints", func(t *testing.T) {
		spec := EncodingSpec{Frequency: pb.FrequencyScheme_FREQUENCY_SCHEME_OCTAVES,
			Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS, NumFrequencies: 10, MaxFreqExp: 8,
			Coordinates: 3, IncludeInput: true}
		points := []float64{0.5, -0.25, 0.1, 0.3, 1, -0.75}
		got, err := c.Encode(ctx, spec, points)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Shape) != 2 || got.Shape[0] != 2 || got.Shape[1] != spec.Width() || spec.Width() != 63 {
			t.Fatalf("shape %v, want [2 63]", got.Shape)
		}
		v, err := got.Float32()
		if err != nil {
			t.Fatal(err)
		}
		// x = 0.5 at 2 pi 2^0: angle pi, sin exactly +0 and cos -1; x = 1
		// (point 1, coordinate 1: pair 10) a whole turn, sin +0 and cos 1.
		if math.Float32bits(v[0]) != 0 || v[30] != -1 || math.Float32bits(v[63+10]) != 0 || v[63+40] != 1 {
			t.Errorf("quarter turns: %v %v %v %v", v[0], v[30], v[63+10], v[63+40])
		}
		for p := 0; p < 2; p++ {
			for k := 0; k < 3; k++ {
				if want := float32(points[3*p+k]); v[63*p+60+k] != want {
					t.Errorf("input column %d of point %d = %v, want %v", k, p, v[63*p+60+k], want)
				}
			}
		}
	})

	t.Run("ErrorsNameTheField", func(t *testing.T) {
		for _, c2 := range []struct {
			spec      EncodingSpec
			positions []float64
			code      string
			field     string
		}{
			{EncodingSpec{Dim: 5}, []float64{1}, "INVALID_ARGUMENT", "spec.dim"},
			{EncodingSpec{Dim: 256, Scale: 1000}, []float64{0, 17000}, "OUT_OF_RANGE", "positions[1]"},
			{EncodingSpec{Dim: 4, Coordinates: 2}, []float64{1, 2, 3}, "INVALID_ARGUMENT", "positions"},
		} {
			_, err := c.Encode(ctx, c2.spec, c2.positions)
			e, ok := err.(*Error)
			if !ok || CodeName(e.Code) != c2.code || !strings.Contains(e.Message, c2.field) {
				t.Errorf("Encode(%+v, %v) = %v, want %s naming %s", c2.spec, c2.positions, err, c2.code, c2.field)
			}
		}
	})

	t.Run("NoRoutingKey", func(t *testing.T) {
		if _, err := c.Encode(ctx, EncodingSpec{Dim: 8}, []float64{0.5}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Gather(ctx, Spec{D: 8, MaxLen: 4}, []uint32{1}); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.sent["Encode"]) != 0 || len(h.received["Encode"]) != 0 {
			t.Errorf("Encode sent %v, server saw %v; want no %s", h.sent["Encode"], h.received["Encode"], RoutingKeyHeader)
		}
		// The same check sees a table call's key, both ways.
		key := Spec{D: 8, MaxLen: 4}.RoutingKey()
		if len(h.sent["GetRows"]) != 1 || h.sent["GetRows"][0] != key ||
			len(h.received["GetRows"]) != 1 || h.received["GetRows"][0] != key {
			t.Errorf("GetRows sent %v, server saw %v; want %s", h.sent["GetRows"], h.received["GetRows"], key)
		}
	})
}
