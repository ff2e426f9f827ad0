// Command posenc-interop runs the interop script (tests/interop/SCRIPT.md)
// with the Go client and prints one line per call. With --shared-memory it
// fetches the script's GetTable tables through shared memory instead (the
// server runs with --shm_dir): their lines, then how many were mapped.
//
// Usage: posenc-interop HOST:PORT [--shared-memory]
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	posenc "posenc/client/go"
	pb "posenc/client/go/posencv1"
)

var dtypeNames = map[pb.DType]string{
	pb.DType_DTYPE_FLOAT32: "float32", pb.DType_DTYPE_FLOAT64: "float64",
	pb.DType_DTYPE_FLOAT16: "float16", pb.DType_DTYPE_BFLOAT16: "bfloat16",
}

// printPayload prints "<rpc> <name> <dtype> <rows>x<d> sha256=<hex>" or the
// error's code name.
func printPayload(rpc, name string, dtype pb.DType, rows int, d uint32, data []byte, err error) {
	if err != nil {
		if e, ok := err.(*posenc.Error); ok {
			fmt.Printf("%s %s %s\n", rpc, name, posenc.CodeName(e.Code))
			return
		}
		log.Fatalf("%s %s: %v", rpc, name, err)
	}
	fmt.Printf("%s %s %s %dx%d sha256=%x\n", rpc, name, dtypeNames[dtype], rows, d, sha256.Sum256(data))
}

func printTensor(rpc, name string, t *posenc.Tensor, err error) {
	if err != nil {
		printPayload(rpc, name, 0, 0, 0, nil, err)
		return
	}
	printPayload(rpc, name, t.DType, int(t.Shape[0]), t.Shape[1], t.Data, nil)
}

// collector concatenates the tensors of a stream.
type collector struct {
	dtype pb.DType
	rows  int
	data  []byte
}

func (c *collector) add(_ uint32, t *posenc.Tensor) error {
	c.dtype = t.DType
	if len(t.Shape) == 1 {
		c.rows++
	} else {
		c.rows += int(t.Shape[0])
	}
	c.data = append(c.data, t.Data...)
	return nil
}

func u32(v uint32) *uint32 { return &v }

func boolPtr(v bool) *bool { return &v }

// namedSpec is one GetTable line of the script.
type namedSpec struct {
	name string
	spec posenc.Spec
}

func main() {
	if len(os.Args) != 2 && (len(os.Args) != 3 || os.Args[2] != "--shared-memory") {
		log.Fatalf("usage: %s HOST:PORT [--shared-memory]", os.Args[0])
	}
	sharedMemory := len(os.Args) == 3
	opts := []posenc.Option{posenc.WithTimeout(20 * time.Second)}
	if sharedMemory {
		opts = append(opts, posenc.WithSharedMemory())
	}
	c, err := posenc.Dial(os.Args[1], opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	d4 := posenc.Spec{D: 4, MaxLen: 16}
	d512 := posenc.Spec{D: 512, Base: 500.5, MaxLen: 40,
		DType: pb.DType_DTYPE_FLOAT64, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS}
	d1024 := posenc.Spec{D: 1024, Base: 1e6, MaxLen: 24,
		DType: pb.DType_DTYPE_FLOAT16, Frequency: pb.Frequency_FREQUENCY_T2T}
	d64 := posenc.Spec{D: 64, MaxLen: 100,
		DType: pb.DType_DTYPE_BFLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}
	llama3 := posenc.Spec{D: 128, Base: 500000, MaxLen: 32, DType: pb.DType_DTYPE_BFLOAT16,
		Layout: pb.Layout_LAYOUT_ROTATE_HALF,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LLAMA3, Factor: 8,
			OriginalMaxPositionEmbeddings: 8192, LowFreqFactor: 1, HighFreqFactor: 4}}
	yarn := posenc.Spec{D: 64, Base: 150000, MaxLen: 16, DType: pb.DType_DTYPE_FLOAT32,
		Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_YARN, Factor: 32,
			OriginalMaxPositionEmbeddings: 4096, BetaFast: 32, BetaSlow: 1, Truncate: boolPtr(false)}}
	shortFactor := []float64{1, 1.05, 1.1, 1.25, 1.5, 2, 3, 4.5}
	longFactor := []float64{1, 1.5, 2.5, 4, 7, 12, 20, 32.5}
	longrope := posenc.Spec{D: 16, MaxLen: 16, DType: pb.DType_DTYPE_FLOAT64,
		Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LONGROPE, Factor: 32,
			OriginalMaxPositionEmbeddings: 4096, SeqLen: 8192,
			ShortFactor: shortFactor, LongFactor: longFactor}}
	dynamic := posenc.Spec{D: 32, MaxLen: 40, DType: pb.DType_DTYPE_FLOAT16,
		Layout: pb.Layout_LAYOUT_ROTATE_HALF,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_DYNAMIC, Factor: 2,
			OriginalMaxPositionEmbeddings: 16, SeqLen: 40}}
	badList := posenc.Spec{D: 16, MaxLen: 16, DType: pb.DType_DTYPE_FLOAT64,
		Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_LONGROPE, Factor: 32,
			OriginalMaxPositionEmbeddings: 4096, SeqLen: 8192,
			ShortFactor: shortFactor[:7], LongFactor: longFactor}}
	yarnPrf := posenc.Spec{D: 64, MaxLen: 1, DType: pb.DType_DTYPE_BFLOAT16,
		Layout: pb.Layout_LAYOUT_ROTATE_HALF, PartialRotaryFactor: 0.5,
		Rope: &pb.RopeScaling{Type: pb.RopeType_ROPE_TYPE_YARN, Factor: 40,
			OriginalMaxPositionEmbeddings: 4096, BetaFast: 32, BetaSlow: 1,
			Mscale: 1, MscaleAllDim: 0.707}}
	crop := posenc.Spec{D: 32, DType: pb.DType_DTYPE_FLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS,
		Grid: &pb.GridSpec{Axes: []*pb.GridSpecAxis{
			{Size: 3, Channels: 16, FirstIndex: 10, PositionNumerator: 1, PositionDenominator: 3},
			{Size: 5, Channels: 16, FirstIndex: 9, PositionNumerator: 1, PositionDenominator: 3}},
			ChannelOrder: []uint32{1, 0}, ExtraZeroRows: 1}}

	if sharedMemory {
		tables := []namedSpec{{"d4_f32", d4}, {"d512_f64_concat", d512}, {"d1024_f16_t2t", d1024},
			{"d64_bf16_cossin", d64}, {"rope_llama3_bf16", llama3}, {"rope_yarn_pairs_f32", yarn},
			{"rope_longrope_f64", longrope}, {"grid_crop_f16", crop}}
		mapped := 0
		for _, table := range tables {
			t, err := c.Table(ctx, table.spec)
			printTensor("GetTable", table.name, t, err)
			if err == nil && t.Mapped() {
				mapped++
				t.Close()
			}
		}
		fmt.Printf("SharedMemory mapped %d of %d\n", mapped, len(tables))
		return
	}

	t, err := c.Table(ctx, d4)
	printTensor("GetTable", "d4_f32", t, err)
	t, err = c.Table(ctx, d512)
	printTensor("GetTable", "d512_f64_concat", t, err)
	t, err = c.Table(ctx, d1024)
	printTensor("GetTable", "d1024_f16_t2t", t, err)
	t, err = c.Table(ctx, d64)
	printTensor("GetTable", "d64_bf16_cossin", t, err)

	var rows collector
	err = c.Rows(ctx, posenc.Spec{D: 512, MaxLen: 64}, posenc.Range{Start: 5, End: u32(37)}, rows.add)
	printPayload("StreamRows", "d512_f32_5_37", rows.dtype, rows.rows, 512, rows.data, err)
	var batches collector
	err = c.Batches(ctx, posenc.Spec{D: 256, MaxLen: 128, DType: pb.DType_DTYPE_BFLOAT16,
		Frequency: pb.Frequency_FREQUENCY_T2T}, posenc.Range{Start: 3, End: u32(100)}, 7, batches.add)
	printPayload("StreamBatches", "d256_bf16_t2t_3_100_by7", batches.dtype, batches.rows, 256, batches.data, err)
	t, err = c.Gather(ctx, posenc.Spec{D: 128, Base: 1234.5, MaxLen: 64,
		DType: pb.DType_DTYPE_FLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS},
		[]uint32{9, 0, 9, 63, 1, 2, 2, 40})
	printTensor("GetRows", "d128_f16_concat", t, err)

	t, err = c.Table(ctx, posenc.Spec{D: 5, MaxLen: 8})
	printTensor("GetTable", "odd_d", t, err)
	t, err = c.Gather(ctx, posenc.Spec{D: 4, MaxLen: 16}, []uint32{3, 16})
	printTensor("GetRows", "past_max_len", t, err)
	t, err = c.Table(ctx, posenc.Spec{D: 1024, MaxLen: 512})
	printTensor("GetTable", "over_max_message", t, err)

	stats, err := c.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("GetStats max_message_bytes %d\n", stats.GetServer().GetMaxMessageBytes())

	// RoPE.
	t, err = c.Table(ctx, llama3)
	printTensor("GetTable", "rope_llama3_bf16", t, err)
	t, err = c.Table(ctx, yarn)
	printTensor("GetTable", "rope_yarn_pairs_f32", t, err)
	t, err = c.Table(ctx, longrope)
	printTensor("GetTable", "rope_longrope_f64", t, err)
	var ropeBatches collector
	err = c.Batches(ctx, dynamic, posenc.Range{Start: 0, End: u32(40)}, 5, ropeBatches.add)
	printPayload("StreamBatches", "rope_dynamic_f16_by5", ropeBatches.dtype, ropeBatches.rows, 64, ropeBatches.data, err)
	t, err = c.Table(ctx, badList)
	printTensor("GetTable", "rope_bad_list", t, err)

	// Encode.
	flux := posenc.EncodingSpec{Dim: 256, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN, Scale: 1000}
	t, err = c.Encode(ctx, flux, []float64{0, 0.25, 0.5, 0.999, 1.0 / 3})
	printTensor("Encode", "flux_t_f32", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{Dim: 321, PadOddDim: true,
		Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN, DType: pb.DType_DTYPE_FLOAT16},
		[]float64{999.5, 0, 1, 500.25, -3.75})
	printTensor("Encode", "sd_pad_f16", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{Dim: 64, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS,
		Shift: 1, DType: pb.DType_DTYPE_FLOAT64}, []float64{0.001, 999, 123.456})
	printTensor("Encode", "diffusers_shift1_f64", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{Frequency: pb.FrequencyScheme_FREQUENCY_SCHEME_OCTAVES,
		Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS, NumFrequencies: 10, MinFreqExp: 0, MaxFreqExp: 8,
		Coordinates: 3, IncludeInput: true, DType: pb.DType_DTYPE_BFLOAT16},
		[]float64{0.5, -0.25, 0.1, 0.3, 1, -0.75})
	printTensor("Encode", "nerf_bf16", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{AxesDim: []uint32{4, 6, 6},
		Layout: pb.Layout_LAYOUT_INTERLEAVED_PAIRS}, []float64{0, 0, 0, 0, 1, 2, 0, 31, 17})
	printTensor("Encode", "flux_rope_pairs_f32", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{Dim: 16, MaxPeriod: 1e6, MropeSection: []uint32{2, 3, 3},
		Layout: pb.Layout_LAYOUT_ROTATE_HALF, DType: pb.DType_DTYPE_BFLOAT16},
		[]float64{7, 7, 7, 10, 11, 12, 10, 11, 13})
	printTensor("Encode", "qwen2_mrope_bf16", t, err)
	t, err = c.Encode(ctx, posenc.EncodingSpec{Dim: 5}, []float64{1})
	printTensor("Encode", "odd_dim", t, err)
	t, err = c.Encode(ctx, flux, []float64{17000})
	printTensor("Encode", "past_limit", t, err)

	// A grid table, MaxLen unset.
	t, err = c.Table(ctx, crop)
	printTensor("GetTable", "grid_crop_f16", t, err)

	// The routing keys of the specs above and of tricky bases.
	fmt.Println("Key d4_f32 " + posenc.Spec{D: 4, MaxLen: 1}.RoutingKey())
	fmt.Println("Key d512_f64_concat " + posenc.Spec{D: 512, MaxLen: 1, Base: 500.5, DType: pb.DType_DTYPE_FLOAT64, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS}.RoutingKey())
	fmt.Println("Key d1024_f16_t2t " + posenc.Spec{D: 1024, MaxLen: 1, Base: 1e6, DType: pb.DType_DTYPE_FLOAT16, Frequency: pb.Frequency_FREQUENCY_T2T}.RoutingKey())
	fmt.Println("Key d64_bf16_cossin " + posenc.Spec{D: 64, MaxLen: 1, DType: pb.DType_DTYPE_BFLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}.RoutingKey())
	fmt.Println("Key d256_bf16_t2t " + posenc.Spec{D: 256, MaxLen: 1, DType: pb.DType_DTYPE_BFLOAT16, Frequency: pb.Frequency_FREQUENCY_T2T}.RoutingKey())
	fmt.Println("Key d128_f16_concat " + posenc.Spec{D: 128, MaxLen: 1, Base: 1234.5, DType: pb.DType_DTYPE_FLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS}.RoutingKey())
	fmt.Println("Key base_1e21 " + posenc.Spec{D: 8, MaxLen: 1, Base: 1e21}.RoutingKey())
	fmt.Println("Key base_5e-324 " + posenc.Spec{D: 8, MaxLen: 1, Base: 5e-324}.RoutingKey())
	fmt.Println("Key base_0.1 " + posenc.Spec{D: 8, MaxLen: 1, Base: 0.1}.RoutingKey())
	fmt.Println("Key base_123456789012345680000 " + posenc.Spec{D: 8, MaxLen: 1, Base: 123456789012345680000}.RoutingKey())
	fmt.Println("Key base_1e-7 " + posenc.Spec{D: 8, MaxLen: 1, Base: 1e-7}.RoutingKey())
	fmt.Println("Key base_1.7976931348623157e308 " + posenc.Spec{D: 8, MaxLen: 1, Base: 1.7976931348623157e308}.RoutingKey())
	fmt.Println("Key base_0.30000000000000004 " + posenc.Spec{D: 8, MaxLen: 1, Base: 0.30000000000000004}.RoutingKey())
	fmt.Println("Key base_1e16 " + posenc.Spec{D: 8, MaxLen: 1, Base: 1e16}.RoutingKey())
	fmt.Println("Key rope_llama3_bf16 " + llama3.RoutingKey())
	fmt.Println("Key rope_yarn_pairs_f32 " + yarn.RoutingKey())
	fmt.Println("Key rope_longrope_f64 " + longrope.RoutingKey())
	fmt.Println("Key rope_dynamic_f16 " + dynamic.RoutingKey())
	fmt.Println("Key rope_bad_list " + badList.RoutingKey())
	fmt.Println("Key rope_yarn_prf " + yarnPrf.RoutingKey())
	fmt.Println("Key grid_crop_f16 " + crop.RoutingKey())

	t, err = c.Gather(ctx, posenc.Spec{D: 4, MaxLen: 16}, []uint32{2})
	if err != nil {
		log.Fatal(err)
	}
	values, err := t.Float32()
	if err != nil {
		log.Fatal(err)
	}
	parts := []string{"Example", "d4_pos2"}
	for _, v := range values {
		parts = append(parts, fmt.Sprintf("%.4f", v))
	}
	fmt.Println(strings.Join(parts, " "))
}
