// Command posenc-interop runs the interop script (tests/interop/SCRIPT.md)
// with the Go client and prints one line per call.
//
// Usage: posenc-interop HOST:PORT
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

func main() {
	if len(os.Args) != 2 {
		log.Fatalf("usage: %s HOST:PORT", os.Args[0])
	}
	c, err := posenc.Dial(os.Args[1], posenc.WithTimeout(20*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	t, err := c.Table(ctx, posenc.Spec{D: 4, MaxLen: 16})
	printTensor("GetTable", "d4_f32", t, err)
	t, err = c.Table(ctx, posenc.Spec{D: 512, Base: 500.5, MaxLen: 40,
		DType: pb.DType_DTYPE_FLOAT64, Layout: pb.Layout_LAYOUT_CONCAT_SIN_COS})
	printTensor("GetTable", "d512_f64_concat", t, err)
	t, err = c.Table(ctx, posenc.Spec{D: 1024, Base: 1e6, MaxLen: 24,
		DType: pb.DType_DTYPE_FLOAT16, Frequency: pb.Frequency_FREQUENCY_T2T})
	printTensor("GetTable", "d1024_f16_t2t", t, err)
	t, err = c.Table(ctx, posenc.Spec{D: 64, MaxLen: 100,
		DType: pb.DType_DTYPE_BFLOAT16, Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN})
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
