#!/usr/bin/env bash
# Regenerates the committed seed corpus fuzz/corpus/<target>/ from text-format
# requests with protoc --encode. Run from anywhere; needs protoc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto_dir="$here/../proto"
encode() {  # target name message text
  mkdir -p "$here/corpus/$1"
  printf '%s' "$4" | protoc --proto_path="$proto_dir" \
    --encode="posenc.v1.$3" posenc/v1/posenc.proto >"$here/corpus/$1/$2"
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
# Regression (fuzz_stream_batches found it): an explicit attention factor on
# a float16 tie (1 + 2^-11) made the exact path at position 0 loop forever.
tie='spec { d: 24 max_len: 24 dtype: DTYPE_FLOAT16 layout: LAYOUT_INTERLEAVED_PAIRS rope { type: ROPE_TYPE_YARN factor: 4 original_max_position_embeddings: 65 mscale_all_dim: 0.7 attention_factor: 1.00048828125 } }'
encode get_table yarn_attention_tie GetTableRequest "$tie"
encode stream_batches yarn_attention_tie StreamBatchesRequest "$tie rows_per_batch: 5"
