// Package posenc is the Go client of the posenc.v1.PositionalEncoding gRPC
// service, which serves sinusoidal positional-encoding tables.
//
//	c, err := posenc.Dial("127.0.0.1:50051")
//	defer c.Close()
//	t, err := c.Table(ctx, posenc.Spec{D: 512, MaxLen: 2048})
//	values, err := t.Float32() // len 2048*512, row-major; t.Shape = [2048 512]
//
// Every failed call returns an *Error carrying the gRPC code and message
// (status.Code(err) works too).
package posenc

//go:generate ./generate.sh
