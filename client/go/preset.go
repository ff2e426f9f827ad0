package posenc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	pb "posenc/client/go/posencv1"
)

// Preset is a library call resolved by the server (ResolvePreset,
// docs/presets.md): exactly one of Table and Encoding is set.
type Preset struct {
	// A table (grid tables included): pass *Table to Table, Gather, Rows or
	// Batches.
	Table *Spec
	// An encoding: pass it to EncodeResolved. It is the server's own spec,
	// every field explicit, sent back as is.
	Encoding *pb.EncodingSpec
	// The preset resolved (the one a config chose when none was named).
	Name string
	// Library, version followed, file and function.
	Reproduces string
}

// PresetArgument writes a Go value as the server reads a library argument:
// bools as True/False, numbers in their shortest round-trip form, slices as
// "[a, b, c]", strings as they are.
func PresetArgument(v any) (string, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case string:
		return x, nil
	case []int:
		return presetList(len(x), func(i int) (string, error) { return PresetArgument(x[i]) })
	case []uint32:
		return presetList(len(x), func(i int) (string, error) { return PresetArgument(x[i]) })
	case []float64:
		return presetList(len(x), func(i int) (string, error) { return PresetArgument(x[i]) })
	}
	return "", fmt.Errorf("posenc: a preset argument of type %T: pass a bool, number, slice of numbers or string", v)
}

func presetList(n int, item func(int) (string, error)) (string, error) {
	parts := make([]string, n)
	for i := range parts {
		s, err := item(i)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return "[" + strings.Join(parts, ", ") + "]", nil
}

// ResolvePreset returns the spec of a library call named with its own
// arguments, e.g. ("diffusers.get_timestep_embedding",
// {"embedding_dim": 320, "flip_sin_to_cos": true}), or of a model's
// config.json text (configJSON; preset "" lets its class pick). dtype 0
// means float32. The server computes nothing; INVALID_ARGUMENT names the
// preset, the argument or config_json.
func (c *Client) ResolvePreset(ctx context.Context, preset string, args map[string]any,
	configJSON string, dtype pb.DType) (*Preset, error) {
	text := make(map[string]string, len(args))
	for k, v := range args {
		s, err := PresetArgument(v)
		if err != nil {
			return nil, err
		}
		text[k] = s
	}
	ctx, cancel := c.context(ctx)
	defer cancel()
	resp, err := c.stub.ResolvePreset(ctx, &pb.ResolvePresetRequest{
		Preset: preset, Arguments: text, ConfigJson: configJSON, Dtype: dtype})
	if err != nil {
		return nil, wrap(err)
	}
	p := &Preset{Name: resp.GetPreset(), Reproduces: resp.GetReproduces()}
	if t := resp.GetTable(); t != nil {
		p.Table = &Spec{D: t.GetD(), MaxLen: t.GetMaxLen(), Base: t.GetBase(),
			DType: t.GetDtype(), Layout: t.GetLayout(), Frequency: t.GetFrequency(),
			Rope: t.GetRope(), PartialRotaryFactor: t.GetPartialRotaryFactor(),
			Grid: t.GetGrid()}
	} else {
		p.Encoding = resp.GetEncoding()
	}
	return p, nil
}

// EncodeResolved is Encode with a spec the server wrote (Preset.Encoding),
// sent as is: every kind of encoding, multi-axis RoPE included.
func (c *Client) EncodeResolved(ctx context.Context, spec *pb.EncodingSpec, positions []float64) (*Tensor, error) {
	ctx, cancel := c.context(ctx)
	defer cancel()
	resp, err := c.stub.Encode(ctx, &pb.EncodeRequest{Spec: spec, Positions: positions})
	if err != nil {
		return nil, wrap(err)
	}
	return fromProto(resp.GetEmbeddings())
}
