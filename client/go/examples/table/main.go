// Command table fetches a small table and one bfloat16 batch stream from a
// local posenc server (see README.md).
package main

import (
	"context"
	"fmt"
	"log"

	posenc "posenc/client/go"
	pb "posenc/client/go/posencv1"
)

func main() {
	c, err := posenc.Dial("127.0.0.1:50320")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	t, err := c.Table(ctx, posenc.Spec{D: 4, MaxLen: 16})
	if err != nil {
		log.Fatal(err)
	}
	values, _ := t.Float32()
	fmt.Println(t.Shape, values[8:12]) // [16 4] [0.9092974 -0.41614684 0.019998666 0.9998]

	spec := posenc.Spec{D: 512, MaxLen: 100, DType: pb.DType_DTYPE_BFLOAT16}
	err = c.Batches(ctx, spec, posenc.Range{}, 64, func(start uint32, b *posenc.Tensor) error {
		fmt.Println(start, b.Shape, b.Widen()[:2])
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Table(ctx, posenc.Spec{D: 5, MaxLen: 8})
	fmt.Println(err) // posenc: INVALID_ARGUMENT: spec.d must be even ...
}
