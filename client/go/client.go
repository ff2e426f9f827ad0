package posenc

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "posenc/client/go/posencv1"
)

// maxReceiveBytes lets whole tables (64 MiB and more) through.
const maxReceiveBytes = 1 << 30

// Client is a connection to a posenc server. Safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	stub    pb.PositionalEncodingClient
	timeout time.Duration
	// shm: GetTable asks for shared memory (WithSharedMemory), until a
	// path's directory cannot be opened (not the server's host).
	shm atomic.Bool
}

// Option configures Dial.
type Option func(*options)

type options struct {
	timeout      time.Duration
	dialOpts     []grpc.DialOption
	sharedMemory bool
}

// WithTimeout sets the deadline of each call (a stream counts as one call)
// when the caller's context has none. Default 30s.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithDialOptions adds gRPC dial options (credentials, interceptors...).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// WithSharedMemory makes Table map the table from the server's shared-memory
// directory (posenc_server --shm_dir) when the client runs on the server's
// host: the Tensor's Data is then a read-only mapping, valid until its
// Close. A client that cannot open the file gets the bytes, with no error;
// a file that is not the server's is a DATA_LOSS error. See
// docs/shared_memory.md.
func WithSharedMemory() Option { return func(o *options) { o.sharedMemory = true } }

// Dial connects (lazily) to target, e.g. "127.0.0.1:50051", in plaintext
// unless WithDialOptions brings credentials.
func Dial(target string, opts ...Option) (*Client, error) {
	o := options{timeout: 30 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	dialOpts := append([]grpc.DialOption{
		grpc.WithInsecure(), // grpc 1.33 (Debian 12) predates credentials/insecure
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReceiveBytes)),
	}, o.dialOpts...)
	conn, err := grpc.Dial(target, dialOpts...)
	if err != nil {
		return nil, wrap(err)
	}
	c := &Client{conn: conn, stub: pb.NewPositionalEncodingClient(conn), timeout: o.timeout}
	c.shm.Store(o.sharedMemory)
	return c, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// tableContext is context plus the spec's routing key as x-posenc-table
// metadata, so a consistent-hash proxy sends each table family to one replica.
func (c *Client) tableContext(ctx context.Context, spec Spec) (context.Context, context.CancelFunc) {
	ctx, cancel := c.context(ctx)
	return metadata.AppendToOutgoingContext(ctx, RoutingKeyHeader, spec.RoutingKey()), cancel
}

func (c *Client) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.timeout)
}

// Table returns the whole table, shape [MaxLen, spec.Width()]. With
// WithSharedMemory it may be a mapping of the server's file (t.Mapped()):
// call t.Close() when done with it.
func (c *Client) Table(ctx context.Context, spec Spec) (*Tensor, error) {
	ctx, cancel := c.tableContext(ctx, spec)
	defer cancel()
	if c.shm.Load() {
		resp, err := c.stub.GetTable(ctx, &pb.GetTableRequest{Spec: spec.proto(), AcceptSharedMemory: true})
		if err != nil {
			return nil, wrap(err)
		}
		if resp.GetSharedMemory() == nil {
			return fromProto(resp.GetTable())
		}
		t, outcome, err := mapShared(resp.GetSharedMemory())
		if outcome == shmDone {
			return t, err
		}
		if outcome == shmFallbackNoDir {
			c.shm.Store(false)
		}
	}
	resp, err := c.stub.GetTable(ctx, &pb.GetTableRequest{Spec: spec.proto()})
	if err != nil {
		return nil, wrap(err)
	}
	return fromProto(resp.GetTable())
}

// Gather returns the rows at positions, in that order (repeats allowed),
// shape [len(positions), spec.Width()].
func (c *Client) Gather(ctx context.Context, spec Spec, positions []uint32) (*Tensor, error) {
	ctx, cancel := c.tableContext(ctx, spec)
	defer cancel()
	resp, err := c.stub.GetRows(ctx, &pb.GetRowsRequest{Spec: spec.proto(), Positions: positions})
	if err != nil {
		return nil, wrap(err)
	}
	return fromProto(resp.GetRows())
}

// Encode returns the rows of real-valued points (timesteps, coordinates),
// shape [points, spec.Width()]. positions holds spec.Coordinates values per
// point, point-major; each is sent as the exact float64 it is. No routing key
// is sent: nothing is cached, any replica answers.
func (c *Client) Encode(ctx context.Context, spec EncodingSpec, positions []float64) (*Tensor, error) {
	ctx, cancel := c.context(ctx)
	defer cancel()
	resp, err := c.stub.Encode(ctx, &pb.EncodeRequest{Spec: spec.proto(), Positions: positions})
	if err != nil {
		return nil, wrap(err)
	}
	return fromProto(resp.GetEmbeddings())
}

// GridAxis is one coordinate of EncodeGrid: the integers Start, Start+1, ...,
// Start+Count-1 (Count 0 means 1: the coordinate fixed at Start).
type GridAxis struct {
	Start int32
	Count uint32
}

// EncodeGrid returns the rows of the integer points of a grid (an image's
// patch ids), one axis per coordinate, row-major (the last axis fastest): a
// FLUX h x w latent is {{0, 0}, {0, h}, {0, w}}. No routing key is sent.
func (c *Client) EncodeGrid(ctx context.Context, spec EncodingSpec, axes []GridAxis) (*Tensor, error) {
	ctx, cancel := c.context(ctx)
	defer cancel()
	grid := &pb.PositionGrid{}
	for _, a := range axes {
		grid.Axes = append(grid.Axes, &pb.GridAxis{Start: a.Start, Count: a.Count})
	}
	resp, err := c.stub.Encode(ctx, &pb.EncodeRequest{Spec: spec.proto(), Grid: grid})
	if err != nil {
		return nil, wrap(err)
	}
	return fromProto(resp.GetEmbeddings())
}

// Stats returns the server's cache counters, call counts and limits.
func (c *Client) Stats(ctx context.Context) (*pb.GetStatsResponse, error) {
	ctx, cancel := c.context(ctx)
	defer cancel()
	resp, err := c.stub.GetStats(ctx, &pb.GetStatsRequest{})
	return resp, wrap(err)
}

// Range selects rows [Start, End); a nil End means spec.MaxLen.
type Range struct {
	Start uint32
	End   *uint32
}

// Rows calls fn for each row of r in order, with its position and a [Width()]
// tensor. An error from fn cancels the stream and is returned as is.
func (c *Client) Rows(ctx context.Context, spec Spec, r Range, fn func(position uint32, row *Tensor) error) error {
	ctx, cancel := c.tableContext(ctx, spec)
	defer cancel()
	stream, err := c.stub.StreamRows(ctx, &pb.StreamRowsRequest{Spec: spec.proto(), Start: r.Start, End: r.End})
	if err != nil {
		return wrap(err)
	}
	return drain(stream.Recv, func(m *pb.StreamRowsResponse) (uint32, *pb.Tensor) {
		return m.GetPosition(), m.GetRow()
	}, fn)
}

// Batches calls fn for each batch of r in order, with its first position and
// a [rows, Width()] tensor. rowsPerBatch 0 lets the server pick (about 64 KiB).
func (c *Client) Batches(ctx context.Context, spec Spec, r Range, rowsPerBatch uint32, fn func(start uint32, batch *Tensor) error) error {
	ctx, cancel := c.tableContext(ctx, spec)
	defer cancel()
	stream, err := c.stub.StreamBatches(ctx, &pb.StreamBatchesRequest{
		Spec: spec.proto(), Start: r.Start, End: r.End, RowsPerBatch: rowsPerBatch})
	if err != nil {
		return wrap(err)
	}
	return drain(stream.Recv, func(m *pb.StreamBatchesResponse) (uint32, *pb.Tensor) {
		return m.GetStart(), m.GetBatch()
	}, fn)
}

// drain reads a server stream to its end, handing each tensor to fn.
func drain[M any](recv func() (M, error), split func(M) (uint32, *pb.Tensor), fn func(uint32, *Tensor) error) error {
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return wrap(err)
		}
		position, proto := split(m)
		t, err := fromProto(proto)
		if err != nil {
			return err
		}
		if err := fn(position, t); err != nil {
			return err
		}
	}
}
