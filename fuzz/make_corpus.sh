#!/usr/bin/env bash
# Regenerates the hand-written seeds of fuzz/corpus/<target>/ from text-format
# requests with protoc --encode (every seed named here is rewritten byte for
# byte). Run from anywhere; needs protoc.
#
# The corpus also holds seeds the fuzzers found (named by their SHA-1, added
# by fuzz/long.sh's merge); those are kept as found, since their bytes are
# the point (a malformed request is not text-format). --check compares
# instead of writing: exit 1 if a named seed differs from what is committed.
#
# The harness (fuzz/service_harness.h) runs each seed against a server with
# the real request limits (d <= 65536, max_len <= 2^24) and a 512 KiB answer
# limit (small budgets keep an input cheap), so the seeds below reach those
# limits.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto_dir="$here/../proto"
check=0
[[ "${1:-}" == "--check" ]] && check=1
status=0

encode() {  # target name message text
  local out="$here/corpus/$1/$2"
  mkdir -p "$here/corpus/$1"
  if ((check)); then
    if ! printf '%s' "$4" | protoc --proto_path="$proto_dir" \
        --encode="posenc.v1.$3" posenc/v1/posenc.proto | cmp -s - "$out"; then
      echo "make_corpus: $1/$2 differs from its definition" >&2
      status=1
    fi
    return
  fi
  printf '%s' "$4" | protoc --proto_path="$proto_dir" \
    --encode="posenc.v1.$3" posenc/v1/posenc.proto >"$out"
}
# One spec as every method's request: GetTable as it is, StreamRows rows
# 1..9, StreamBatches 5 rows a message, GetRows positions 0, 3 and 7.
every_method() {  # name spec
  encode get_table "$1" GetTableRequest "$2"
  encode stream_rows "$1" StreamRowsRequest "$2 start: 1 end: 9"
  encode stream_batches "$1" StreamBatchesRequest "$2 rows_per_batch: 5"
  encode get_rows "$1" GetRowsRequest "$2 positions: [0, 3, 7]"
}

spec='spec { d: 4 max_len: 4 }'
encode get_table worked_example GetTableRequest "$spec"
encode get_table float64_concat GetTableRequest 'spec { d: 16 max_len: 32 dtype: DTYPE_FLOAT64 layout: LAYOUT_CONCAT_SIN_COS }'
encode get_table t2t_half GetTableRequest 'spec { d: 8 max_len: 100 base: 500 dtype: DTYPE_FLOAT16 frequency: FREQUENCY_T2T }'
encode get_table odd_d GetTableRequest 'spec { d: 5 max_len: 4 }'
encode stream_rows whole StreamRowsRequest "$spec"
encode stream_rows range StreamRowsRequest 'spec { d: 64 max_len: 512 dtype: DTYPE_BFLOAT16 } start: 500 end: 512'
encode stream_rows empty_range StreamRowsRequest 'spec { d: 4 max_len: 4 } start: 2 end: 2'
encode stream_batches default StreamBatchesRequest 'spec { d: 32 max_len: 300 }'
encode stream_batches sized StreamBatchesRequest 'spec { d: 8 max_len: 64 layout: LAYOUT_CONCAT_COS_SIN } start: 3 end: 60 rows_per_batch: 7'
encode stream_batches too_big StreamBatchesRequest 'spec { d: 64 max_len: 512 dtype: DTYPE_FLOAT64 } rows_per_batch: 100000'
encode get_rows few GetRowsRequest 'spec { d: 4 max_len: 4 } positions: [0, 2, 3, 2]'
encode get_rows large_table GetRowsRequest 'spec { d: 64 max_len: 512 dtype: DTYPE_FLOAT64 } positions: [511, 0, 256]'
encode get_rows out_of_range GetRowsRequest 'spec { d: 4 max_len: 4 } positions: [4]'

# RoPE: every scheme, each with another dtype and layout.
every_method rope_dynamic 'spec { d: 8 max_len: 40 rope { type: ROPE_TYPE_DYNAMIC factor: 2 original_max_position_embeddings: 16 seq_len: 40 } }'
every_method rope_llama3 'spec { d: 16 base: 500000 max_len: 32 dtype: DTYPE_BFLOAT16 layout: LAYOUT_ROTATE_HALF rope { type: ROPE_TYPE_LLAMA3 factor: 8 original_max_position_embeddings: 32 low_freq_factor: 1 high_freq_factor: 4 } }'
every_method rope_longrope 'spec { d: 8 max_len: 16 dtype: DTYPE_FLOAT16 layout: LAYOUT_CONCAT_COS_SIN rope { type: ROPE_TYPE_LONGROPE factor: 4 original_max_position_embeddings: 8 seq_len: 16 short_factor: [1, 1.5] long_factor: [2, 4] } partial_rotary_factor: 0.5 }'
every_method rope_yarn 'spec { d: 16 max_len: 24 dtype: DTYPE_FLOAT64 layout: LAYOUT_INTERLEAVED_PAIRS rope { type: ROPE_TYPE_YARN factor: 4 original_max_position_embeddings: 64 mscale: 1 mscale_all_dim: 0.7 truncate: false } }'

# Regression (c485e66, fuzz_stream_batches in CI): an explicit attention
# factor on a float16 tie (1 + 2^-11) made the exact path at position 0 loop
# forever.
tie='spec { d: 24 max_len: 24 dtype: DTYPE_FLOAT16 layout: LAYOUT_INTERLEAVED_PAIRS rope { type: ROPE_TYPE_YARN factor: 4 original_max_position_embeddings: 65 mscale_all_dim: 0.7 attention_factor: 1.00048828125 } }'
encode get_table yarn_attention_tie GetTableRequest "$tie"
encode stream_batches yarn_attention_tie StreamBatchesRequest "$tie rows_per_batch: 5"

# At the server's limits: d = 65536, max_len = 2^24, every dtype and layout.
# A few rows of such a table are computed alone (never the whole table).
big='d: 65536 max_len: 16777216'
# (A float64 row of d = 65536 is the whole 512 KiB answer.)
encode get_rows limit_float64 GetRowsRequest "spec { $big dtype: DTYPE_FLOAT64 } positions: [16777215]"
encode get_rows limit_float64_middle GetRowsRequest "spec { $big dtype: DTYPE_FLOAT64 } positions: [8388608]"
encode get_rows limit_float16_rotate_half GetRowsRequest "spec { $big dtype: DTYPE_FLOAT16 layout: LAYOUT_ROTATE_HALF } positions: [16777215]"
encode get_rows limit_bfloat16_t2t GetRowsRequest "spec { $big dtype: DTYPE_BFLOAT16 layout: LAYOUT_CONCAT_SIN_COS frequency: FREQUENCY_T2T base: 1e+30 } positions: [16777214, 1]"
encode get_rows limit_yarn GetRowsRequest "spec { $big base: 1000000 layout: LAYOUT_INTERLEAVED_PAIRS rope { type: ROPE_TYPE_YARN factor: 64 original_max_position_embeddings: 4096 beta_fast: 16 } } positions: [16777215, 1000]"
encode get_rows limit_llama3_prf GetRowsRequest "spec { d: 65536 max_len: 16777216 base: 500000 dtype: DTYPE_FLOAT16 layout: LAYOUT_ROTATE_HALF partial_rotary_factor: 0.25 rope { type: ROPE_TYPE_LLAMA3 factor: 32 original_max_position_embeddings: 8192 low_freq_factor: 1 high_freq_factor: 4 } } positions: [16777215]"
encode get_rows too_many_rows GetRowsRequest "spec { $big } positions: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]"
encode stream_rows limit_tail StreamRowsRequest "spec { $big dtype: DTYPE_FLOAT64 layout: LAYOUT_CONCAT_COS_SIN } start: 16777200"
encode stream_rows limit_d2 StreamRowsRequest 'spec { d: 2 max_len: 16777216 dtype: DTYPE_FLOAT16 }'
encode stream_batches limit_tail StreamBatchesRequest "spec { $big dtype: DTYPE_BFLOAT16 layout: LAYOUT_INTERLEAVED_PAIRS } start: 16777000"
# LongRoPE's lists hold d/2 = 128 divisors each; seq_len > M picks long.
short=$(seq -s ', ' 1 128 | sed 's/[0-9]\+/1/g')
long=$(seq -s ', ' 2 129)
encode stream_batches limit_longrope StreamBatchesRequest "spec { d: 256 max_len: 16777216 layout: LAYOUT_ROTATE_HALF rope { type: ROPE_TYPE_LONGROPE original_max_position_embeddings: 4096 seq_len: 131072 short_factor: [$short] long_factor: [$long] } } start: 131000 end: 131100"
# A whole 512 KiB table (the answer limit), then one row more.
encode get_table at_message_limit GetTableRequest 'spec { d: 1024 max_len: 128 }'
encode get_table over_message_limit GetTableRequest 'spec { d: 1024 max_len: 129 }'
# 512 KiB messages: three chunks in flight exceed --max_inflight_bytes.
encode stream_batches over_inflight StreamBatchesRequest 'spec { d: 1024 max_len: 100000 } rows_per_batch: 128'
# Grid tables (docs/encodings.md "Grid tables"): MAE with its cls token,
# SD3's crop (rational positions), timm's grouped sines, CogVideoX's three
# axes, and refusals (a zero size, d not the channels, a position past 2^24).
every_method grid_mae 'spec { d: 16 layout: LAYOUT_CONCAT_SIN_COS grid { axes { size: 4 channels: 8 } axes { size: 4 channels: 8 } channel_order: [1, 0] extra_zero_rows: 1 } }'
every_method grid_sd3_crop 'spec { d: 32 dtype: DTYPE_FLOAT16 layout: LAYOUT_CONCAT_SIN_COS grid { axes { size: 3 channels: 16 first_index: 10 position_numerator: 8 position_denominator: 24 } axes { size: 5 channels: 16 first_index: 9 position_numerator: 8 position_denominator: 24 } channel_order: [1, 0] } }'
every_method grid_timm_grouped 'spec { d: 16 base: 100 dtype: DTYPE_BFLOAT16 layout: LAYOUT_CONCAT_SIN_COS grid { axes { size: 3 channels: 8 } axes { size: 4 channels: 8 } sin_cos: GRID_SIN_COS_GROUPED } }'
every_method grid_cogvideox 'spec { d: 32 dtype: DTYPE_FLOAT64 layout: LAYOUT_CONCAT_SIN_COS grid { axes { size: 2 channels: 8 } axes { size: 2 channels: 12 position_numerator: 8 position_denominator: 15 } axes { size: 3 channels: 12 position_numerator: 8 position_denominator: 15 } channel_order: [0, 2, 1] } }'
encode get_table grid_zero_size GetTableRequest 'spec { d: 16 grid { axes { size: 4 channels: 8 } axes { size: 0 channels: 8 } } }'
encode get_table grid_wrong_d GetTableRequest 'spec { d: 18 grid { axes { size: 4 channels: 8 } axes { size: 4 channels: 8 } } }'
encode get_rows grid_past_angle_range GetRowsRequest 'spec { d: 4 grid { axes { size: 2 channels: 4 first_index: 16777215 } } } positions: [1]'
# Encode: the libraries' shapes (docs/encodings.md), every dtype and layout,
# exact quarter turns, the bounds on points and frequencies, each refusal.
encode encode worked_example EncodeRequest 'spec { dim: 4 } positions: [2]'
encode encode flux_timesteps EncodeRequest 'spec { dim: 320 layout: LAYOUT_CONCAT_COS_SIN scale: 1000 } positions: [0, 0.25, 0.5, 0.999, 1]'
encode encode diffusers_default EncodeRequest 'spec { dim: 32 dtype: DTYPE_FLOAT16 layout: LAYOUT_CONCAT_SIN_COS shift: 1 } positions: [999.5, 0, 1, 500.25]'
encode encode glide_odd_dim EncodeRequest 'spec { dim: 321 dtype: DTYPE_BFLOAT16 layout: LAYOUT_CONCAT_COS_SIN pad_odd_dim: true max_period: 500 } positions: [10, 999, -3.5]'
encode encode nerf_include_input EncodeRequest 'spec { dtype: DTYPE_FLOAT64 layout: LAYOUT_CONCAT_SIN_COS frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 10 max_freq_exp: 9 coordinates: 3 include_input: true } positions: [0.25, -0.5, 0.125, 1, 2, 3]'
encode encode quarter_turns EncodeRequest 'spec { dtype: DTYPE_FLOAT16 frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 4 min_freq_exp: -2 max_freq_exp: 1 include_input: true } positions: [0.25, 0.5, -0.75, 1, 0, -0.0]'
encode encode octaves_fractional EncodeRequest 'spec { frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 7 min_freq_exp: -1.5 max_freq_exp: 3.25 coordinates: 2 scale: 0.1 dim: 28 } positions: [0.1, -7, 100, 3.14159]'
encode encode tiny_positions EncodeRequest 'spec { dim: 16 dtype: DTYPE_FLOAT64 } positions: [5.421010862427522e-20, -5.421010862427522e-20, 0]'
encode encode position_at_bound EncodeRequest 'spec { dim: 8 scale: 1000 } positions: [16777.216, -16777.215]'
encode encode position_over_bound EncodeRequest 'spec { dim: 8 scale: 1000 } positions: [1, 16777.217]'
encode encode position_nan EncodeRequest 'spec { dim: 8 } positions: [1, nan]'
encode encode position_below_2_64 EncodeRequest 'spec { dim: 8 } positions: [5.42101086242752e-20]'
encode encode frequency_too_small EncodeRequest 'spec { dim: 64 max_period: 1e+300 } positions: [1]'
encode encode octave_frequency_too_big EncodeRequest 'spec { frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 2 max_freq_exp: 22 } positions: [0.5]'
encode encode odd_dim EncodeRequest 'spec { dim: 5 } positions: [1]'
encode encode rope_layout EncodeRequest 'spec { dim: 8 layout: LAYOUT_ROTATE_HALF } positions: [1]'
encode encode octaves_with_shift EncodeRequest 'spec { frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 2 shift: 1 } positions: [1]'
encode encode shift_at_half EncodeRequest 'spec { dim: 8 shift: 4 } positions: [1]'
encode encode scale_over EncodeRequest 'spec { dim: 8 scale: 33554432 } positions: [1]'
encode encode partial_point EncodeRequest 'spec { dim: 8 coordinates: 2 } positions: [1, 2, 3]'
encode encode no_points EncodeRequest 'spec { dim: 8 }'
# Multi-axis RoPE (FLUX EmbedND, Qwen2-VL / Qwen3-VL M-RoPE, axial) and the
# grid form, and their refusals.
encode encode flux_ids EncodeRequest 'spec { axes_dim: [16, 56, 56] layout: LAYOUT_ROTATION_MATRIX } positions: [0, 0, 0, 0, 3, 5, 1, 63, 127]'
encode encode flux_grid EncodeRequest 'spec { axes_dim: [16, 56, 56] layout: LAYOUT_ROTATION_MATRIX dtype: DTYPE_BFLOAT16 } grid { axes { start: 0 } axes { start: 2 count: 5 } axes { start: -3 count: 7 } }'
encode encode qwen2_vl_sections EncodeRequest 'spec { dim: 128 max_period: 1000000 mrope_section: [16, 24, 24] layout: LAYOUT_ROTATE_HALF } positions: [0, 0, 0, 3, 3, 3, 3, 4, 9, 250000, 4, 9]'
encode encode qwen3_vl_interleaved EncodeRequest 'spec { dim: 128 max_period: 5000000 mrope_section: [24, 20, 20] mrope_interleaved: true layout: LAYOUT_INTERLEAVED_PAIRS dtype: DTYPE_FLOAT64 } grid { axes { start: 7 } axes { start: 7 count: 4 } axes { start: 7 count: 4 } }'
encode encode axial_vit EncodeRequest 'spec { axes_dim: [32, 32] dtype: DTYPE_FLOAT16 layout: LAYOUT_CONCAT_COS_SIN } grid { axes { count: 14 } axes { count: 14 } }'
encode encode multi_axis_bad_section_sum EncodeRequest 'spec { dim: 128 mrope_section: [16, 24, 23] } positions: [0, 0, 0]'
encode encode multi_axis_odd_axis EncodeRequest 'spec { axes_dim: [16, 55, 56] } positions: [0, 0, 0]'
encode encode rotation_matrix_plain EncodeRequest 'spec { dim: 8 layout: LAYOUT_ROTATION_MATRIX } positions: [1]'
encode encode grid_and_positions EncodeRequest 'spec { axes_dim: [2, 2] } positions: [0, 0] grid { axes { count: 2 } axes { count: 2 } }'
encode encode grid_wrong_axes EncodeRequest 'spec { axes_dim: [2, 2] } grid { axes { count: 2 } }'
encode encode grid_over_rows EncodeRequest 'spec { axes_dim: [2, 2] } grid { axes { count: 65536 } axes { count: 2 } }'
encode encode grid_out_of_range EncodeRequest 'spec { axes_dim: [2, 2] } grid { axes { start: 16777215 count: 3 } axes { start: 0 } }'
# Regression (fuzz_encode, found while adding it): an octave exponent of
# 1.3e-192, not an integer, puts x = 0.5 a hair past a whole turn: sin is a
# tiny negative, -0 in every dtype (the MPFR reference had taken it for +0).
encode encode octave_nearly_whole_turn EncodeRequest 'spec { frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 2 max_freq_exp: 1.3202428078732969e-192 } positions: [0.5]'
encode encode octave_nearly_whole_turn_below EncodeRequest 'spec { dtype: DTYPE_FLOAT16 layout: LAYOUT_CONCAT_SIN_COS frequency: FREQUENCY_SCHEME_OCTAVES num_frequencies: 2 min_freq_exp: -1.3202428078732969e-192 } positions: [0.5, -0.5, 1.5]'
# At the limits: dim 65536; a 512 KiB answer (the message limit), then one
# point more; FLUX's 1024 timesteps (bench/ghz/encode_timesteps.json).
encode encode limit_dim EncodeRequest 'spec { dim: 65536 dtype: DTYPE_FLOAT64 layout: LAYOUT_CONCAT_SIN_COS } positions: [999.5]'
points=$(seq 0 1023 | awk '{printf "%s%.17g", (NR > 1 ? ", " : ""), ($1 + 0.5) / 1024}')
encode encode limit_flux_1024 EncodeRequest "spec { dim: 320 layout: LAYOUT_CONCAT_COS_SIN scale: 1000 } positions: [$points]"
points=$(seq 0 127 | awk '{printf "%s%.17g", (NR > 1 ? ", " : ""), ($1 + 0.5) / 128}')
encode encode limit_at_message_limit EncodeRequest "spec { dim: 1024 } positions: [$points]"
encode encode limit_over_message_limit EncodeRequest "spec { dim: 1024 } positions: [$points, 1]"

# ResolvePreset (fuzz_preset): every preset with its arguments, the model
# configs of tests/testdata/models, and hostile arguments and JSON.
encode preset timesteps ResolvePresetRequest 'preset: "diffusers.Timesteps" arguments { key: "num_channels" value: "320" } arguments { key: "flip_sin_to_cos" value: "True" } arguments { key: "downscale_freq_shift" value: "0" }'
encode preset get_timestep_embedding ResolvePresetRequest 'preset: "diffusers.get_timestep_embedding" arguments { key: "embedding_dim" value: "256" } arguments { key: "max_period" value: "10000" }'
encode preset flux_timestep ResolvePresetRequest 'preset: "flux.timestep_embedding" arguments { key: "dim" value: "256" } arguments { key: "time_factor" value: "1000.0" }'
encode preset nerf ResolvePresetRequest 'preset: "nerfstudio.NeRFEncoding" arguments { key: "in_dim" value: "3" } arguments { key: "num_frequencies" value: "10" } arguments { key: "min_freq_exp" value: "0" } arguments { key: "max_freq_exp" value: "8" } arguments { key: "include_input" value: "True" }'
encode preset patch_embed ResolvePresetRequest 'preset: "diffusers.PatchEmbed" arguments { key: "height" value: "128" } arguments { key: "width" value: "128" } arguments { key: "patch_size" value: "2" } arguments { key: "embed_dim" value: "1536" } arguments { key: "pos_embed_max_size" value: "192" }'
encode preset flux_embednd ResolvePresetRequest 'preset: "flux.EmbedND" arguments { key: "dim" value: "128" } arguments { key: "theta" value: "10000" } arguments { key: "axes_dim" value: "[16, 56, 56]" }'
encode preset flux_pos_embed ResolvePresetRequest 'preset: "diffusers.FluxPosEmbed" arguments { key: "theta" value: "10000" } arguments { key: "axes_dim" value: "[16, 56, 56]" }'
encode preset timm_rope ResolvePresetRequest 'preset: "timm.RotaryEmbeddingCat" arguments { key: "dim" value: "64" } arguments { key: "feat_shape" value: "[14, 14]" }'
encode preset limit_embedding_dim ResolvePresetRequest 'preset: "diffusers.get_timestep_embedding" arguments { key: "embedding_dim" value: "65536" } dtype: DTYPE_FLOAT64'
encode preset over_embedding_dim ResolvePresetRequest 'preset: "diffusers.get_timestep_embedding" arguments { key: "embedding_dim" value: "65537" }'
encode preset grid_at_limit ResolvePresetRequest 'preset: "diffusers.PatchEmbed" arguments { key: "height" value: "1048576" } arguments { key: "width" value: "1048576" } arguments { key: "patch_size" value: "1" }'
encode preset unknown_argument ResolvePresetRequest 'preset: "diffusers.Timesteps" arguments { key: "num_channels" value: "320" } arguments { key: "bogus" value: "nan" }'
encode preset unknown_preset ResolvePresetRequest 'preset: "diffusers.Nope"'
for f in "$here"/../tests/testdata/models/*.json; do
  json=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$f" | tr -d '\n')
  encode preset "config_$(basename "$f" .json)" ResolvePresetRequest "config_json: \"$json\""
done
encode preset config_not_json ResolvePresetRequest 'config_json: "{\"_class_name\": \"UNet2DConditionModel\", \"block_out_channels\": [1e999,"'
encode preset config_deep ResolvePresetRequest "config_json: \"$(printf '[%.0s' $(seq 200))\""

# The CLI's config.json reader (fuzz_hf_config): the configs of
# tests/testdata (written as they are), and a few hostile ones.
raw() {  # target name bytes
  local out="$here/corpus/$1/$2"
  mkdir -p "$here/corpus/$1"
  if ((check)); then
    printf '%s' "$3" | cmp -s - "$out" || {
      echo "make_corpus: $1/$2 differs from its definition" >&2
      status=1
    }
    return
  fi
  printf '%s' "$3" >"$out"
}
for f in "$here"/../tests/testdata/hf/*.json "$here"/../tests/testdata/models/*.json; do
  raw hf_config "$(basename "$f" .json)" "$(cat "$f")"
done
raw hf_config llama3 '{"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}'
raw hf_config yarn '{"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768, "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192, "beta_fast": 32, "beta_slow": 1, "mscale": 1, "mscale_all_dim": 0}}'
raw hf_config deepseek '{"qk_rope_head_dim": 64, "hidden_size": 5120, "num_attention_heads": 128, "max_position_embeddings": 163840, "rope_theta": 10000, "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}}'
raw hf_config dynamic '{"head_dim": 128, "max_position_embeddings": 4096, "partial_rotary_factor": 0.5, "rope_scaling": {"type": "dynamic", "factor": 2.0}}'
raw hf_config linear_huge '{"head_dim": 65536, "max_position_embeddings": 16777216, "rope_scaling": {"type": "linear", "factor": 1e308}}'
raw hf_config ill_typed '{"hidden_size": "4096", "num_attention_heads": 0, "max_position_embeddings": -1, "rope_scaling": {"rope_type": 7}}'
raw hf_config not_json '{"hidden_size": 4096,'

# The shared-memory reader (fuzz_shared_mapping): a recipe of 8 bytes
# (change mask, answer-field change, offset, size, parameter; see
# shared_mapping_fuzzer.cc), then the file's bytes.
recipe() {  # name eight-bytes-in-octal-escapes
  local out="$here/corpus/shared_mapping/$1"
  mkdir -p "$here/corpus/shared_mapping"
  if ((check)); then
    cmp -s <(printf "$2"; seq 1 300 | tr -d '\n') "$out" || {
      echo "make_corpus: shared_mapping/$1 differs from its definition" >&2
      status=1
    }
    return
  fi
  { printf "$2"; seq 1 300 | tr -d '\n'; } >"$out"
}
recipe unchanged '\0\0\4\0\100\0\0\0'
recipe truncated '\1\0\4\0\100\0\20\0'
recipe grown '\2\0\4\0\100\0\1\0'
recipe overwritten '\4\0\4\0\100\0\0\1'
recipe symlink '\10\0\4\0\100\0\0\0'
recipe fifo '\20\0\4\0\100\0\0\0'
recipe directory '\20\0\4\0\100\0\1\0'
recipe writable '\40\0\4\0\100\0\0\0'
recipe other_owner '\100\0\4\0\100\0\0\0'
recipe new_inode '\200\0\4\0\100\0\0\0'
recipe offset_past '\0\1\4\0\100\0\0\0'
recipe size_past '\0\2\4\0\100\0\0\0'
recipe file_bytes_lie '\0\3\4\0\100\0\0\0'
recipe digest_lie '\0\4\4\0\100\0\0\0'
recipe offset_wraps '\0\5\4\0\100\0\7\0'
recipe missing_directory '\0\6\4\0\100\0\0\0'
exit "$status"
