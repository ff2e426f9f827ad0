package posenc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "posenc/client/go/posencv1"
)

func TestPresetArgumentSpellings(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{{true, "True"}, {320, "320"}, {0.1, "0.1"}, {[]int{16, 56, 56}, "[16, 56, 56]"},
		{[]float64{1.5}, "[1.5]"}, {"(4,)", "(4,)"}} {
		if got, err := PresetArgument(c.v); err != nil || got != c.want {
			t.Errorf("PresetArgument(%v) = %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	if _, err := PresetArgument(struct{}{}); err == nil {
		t.Error("a struct argument: want an error")
	}
}

func TestPresetsAgainstServer(t *testing.T) {
	target := startServer(t)
	c, err := Dial(target, WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	t.Run("DiffusersCallSameRowsAsHandWrittenSpec", func(t *testing.T) {
		p, err := c.ResolvePreset(ctx, "diffusers.get_timestep_embedding",
			map[string]any{"embedding_dim": 321, "flip_sin_to_cos": true, "downscale_freq_shift": 0},
			"", pb.DType_DTYPE_BFLOAT16)
		if err != nil {
			t.Fatal(err)
		}
		if p.Encoding == nil || p.Name != "diffusers.get_timestep_embedding" ||
			!strings.Contains(p.Reproduces, "diffusers") {
			t.Fatalf("preset %+v", p)
		}
		ts := []float64{999.5, 0.25, 0}
		got, err := c.EncodeResolved(ctx, p.Encoding, ts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.Encode(ctx, EncodingSpec{Dim: 321, PadOddDim: true, DType: pb.DType_DTYPE_BFLOAT16,
			Layout: pb.Layout_LAYOUT_CONCAT_COS_SIN}, ts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) || got.Shape[1] != 321 {
			t.Errorf("preset rows %v differ from the hand-written spec's", got.Shape)
		}
	})

	t.Run("GridPresetIsATable", func(t *testing.T) {
		p, err := c.ResolvePreset(ctx, "mae.get_2d_sincos_pos_embed",
			map[string]any{"embed_dim": 64, "grid_size": 14, "cls_token": true}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Table == nil {
			t.Fatalf("preset %+v: want a table", p)
		}
		table, err := c.Table(ctx, *p.Table)
		if err != nil {
			t.Fatal(err)
		}
		if len(table.Shape) != 2 || table.Shape[0] != 197 || table.Shape[1] != 64 {
			t.Errorf("shape %v, want [197 64]", table.Shape)
		}
	})

	t.Run("QwenConfigPicksMrope", func(t *testing.T) {
		config, err := os.ReadFile(filepath.Join("..", "..", "tests", "testdata", "models", "qwen2_vl_7b_config.json"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.ResolvePreset(ctx, "", nil, string(config), 0)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.EncodeResolved(ctx, p.Encoding, []float64{1000, 1000, 1000})
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "qwen2_vl.mrope" || rows.Shape[1] != 256 {
			t.Errorf("%s: shape %v, want [1 256]", p.Name, rows.Shape)
		}
	})

	t.Run("UnknownArgumentNamed", func(t *testing.T) {
		_, err := c.ResolvePreset(ctx, "flux.timestep_embedding",
			map[string]any{"dim": 256, "dims": 3}, "", 0)
		if err == nil || !strings.Contains(err.Error(), "INVALID_ARGUMENT") ||
			!strings.Contains(err.Error(), "arguments.dims") {
			t.Errorf("err = %v", err)
		}
	})
}
