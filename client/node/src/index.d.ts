// TypeScript declarations of the posenc Node client (src/index.js).

import type { ChannelCredentials } from '@grpc/grpc-js';

/** Element type of a table on the wire. */
export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
/** Where a row puts its sin and cos channels. */
export type Layout = 'interleaved' | 'concat_sin_cos' | 'concat_cos_sin' |
  'rotate_half' | 'interleaved_pairs' | 'rotation_matrix';
/** RoPE scheme, as HF transformers' `rope_type`. */
export type RopeType = 'default' | 'linear' | 'dynamic' | 'yarn' | 'llama3' |
  'longrope';

/**
 * RoPE frequency scaling: HF `rope_scaling` fields in camelCase. Unset fields
 * are not sent (see posenc.proto, message RopeScaling).
 */
export interface RopeScaling {
  /** Unset means 'default'. */
  type?: RopeType;
  factor?: number;
  originalMaxPositionEmbeddings?: number;
  seqLen?: number;
  betaFast?: number;
  betaSlow?: number;
  mscale?: number;
  mscaleAllDim?: number;
  /** Unset means true. */
  truncate?: boolean;
  attentionFactor?: number;
  lowFreqFactor?: number;
  highFreqFactor?: number;
  /** LongRoPE divisors, d_rot / 2 each. */
  shortFactor?: number[];
  longFactor?: number[];
}
/** Frequency convention: the paper's (d/2) or tensor2tensor's (d/2 - 1). */
export type Frequency = 'paper' | 't2t';

/**
 * Names one table: rows 0..maxLen-1 of rowWidth(spec) channels each: d, or
 * d_rot = floor(d * partialRotaryFactor) when set, twice that for the RoPE
 * layouts ('rotate_half', 'interleaved_pairs': rows [cos | sin]).
 */
interface TableSpecFields {
  /** Channels per row (even). */
  d: number;
  /** Wavelength base; 0 or unset means 10000. */
  base?: number;
  /** Default 'float32'. */
  dtype?: Dtype;
  /** Default 'interleaved'. */
  layout?: Layout;
  /** Default 'paper'. */
  frequency?: Frequency;
  /** RoPE scaling; unset means the plain sinusoid. */
  rope?: RopeScaling;
  /** Fraction of d that is rotated; 0 or unset means 1. */
  partialRotaryFactor?: number;
}

/** A table of positions 0..maxLen-1. */
export interface PositionTableSpec extends TableSpecFields {
  /** Number of rows. */
  maxLen: number;
  grid?: undefined;
}

/**
 * A grid table (MAE, diffusers, timm, CogVideoX 2D/3D position embeddings):
 * rows are the grid's points, d the sum of its axes' channels.
 */
export interface GridTableSpec extends TableSpecFields {
  /** 0 or unset means the grid's rows. */
  maxLen?: number;
  grid: GridSpec;
}

export type TableSpec = PositionTableSpec | GridTableSpec;

/** One axis of a GridSpec: size points at (firstIndex + k) * num / den. */
export interface GridAxis {
  size: number;
  /** Channels of the axis's block (even). */
  channels: number;
  /** Index of point 0 (SD3's crop); default 0. */
  firstIndex?: number;
  /** Position step numerator and denominator; 0 or unset means 1. */
  positionNumerator?: number;
  positionDenominator?: number;
}

/** The points of a grid table (posenc.proto GridSpec). */
export interface GridSpec {
  /** Axes in row order (the first varies slowest), 1 to 3. */
  axes: GridAxis[];
  /** The axes in the order of their blocks in a row; [] means row order. */
  channelOrder?: number[];
  /** Default 'per_axis'; 'grouped' puts every block's sines first. */
  sinCos?: 'per_axis' | 'grouped';
  /** Zero rows before the grid's (cls tokens); default 0. */
  extraZeroRows?: number;
}

/** Frequencies of an EncodingSpec: diffusers/GLIDE/FLUX's or nerfstudio's. */
export type FrequencyScheme = 'exponential' | 'octaves';

/**
 * An encoding of real-valued points (Encode): the proto's EncodingSpec in
 * camelCase; unset (or 0 / false) means the server's default. Rows are
 * encodingWidth(spec) channels.
 */
export interface EncodingSpec {
  /** Exponential: channels per coordinate (odd only with padOddDim). */
  dim?: number;
  /** Default 'float32'. */
  dtype?: Dtype;
  /** 'interleaved' (default), 'concat_sin_cos' or 'concat_cos_sin'. */
  layout?: Layout;
  /**
   * 'exponential' (default): f_i = maxPeriod^(-i / (half - shift));
   * 'octaves': f_k = 2 pi 2^(e_k), e_k = linspace(minFreqExp, maxFreqExp,
   * numFrequencies).
   */
  frequency?: FrequencyScheme;
  /** Exponential; 0 or unset means 10000. */
  maxPeriod?: number;
  /** Exponential: diffusers' downscale_freq_shift; default 0. */
  shift?: number;
  /** Every angle is scale * x * f; 0 or unset means 1. */
  scale?: number;
  /** One zero column after the pairs (odd dim, one coordinate). */
  padOddDim?: boolean;
  /** Octaves: number of frequencies. */
  numFrequencies?: number;
  minFreqExp?: number;
  maxFreqExp?: number;
  /** Values per point; 0 or unset means 1. */
  coordinates?: number;
  /** Append the point's coordinates, rounded to dtype. */
  includeInput?: boolean;
  /** Multi-axis RoPE: FLUX EmbedND's axes_dim, e.g. [16, 56, 56]. */
  axesDim?: number[];
  /** Multi-axis RoPE: Qwen2-VL's mrope_section (dim = head_dim). */
  mropeSection?: number[];
  /** Qwen3-VL's interleaved sections. */
  mropeInterleaved?: boolean;
}

/**
 * A table, a batch or a row. float16 and bfloat16 values come as their raw
 * uint16 bits (see float16ToNumber, bfloat16ToNumber).
 */
export interface Tensor {
  dtype: Dtype;
  /** [rows, width], or [width] for one row (see rowWidth). */
  shape: number[];
  /** Row-major values; a view over `bytes` when aligned, else a copy. */
  data: Float32Array | Float64Array | Uint16Array;
  /** The little-endian bytes as received. */
  bytes: Buffer;
  /**
   * true when table() read it from the server's shared-memory file
   * (PosencClientOptions.sharedMemory); unset for bytes over gRPC.
   */
  sharedMemory?: true;
}

export interface PosencClientOptions {
  /** Deadline of each call in ms (a stream counts as one call); 30000. */
  timeoutMs?: number;
  /** Default plaintext (grpc.credentials.createInsecure()). */
  credentials?: ChannelCredentials;
  /** Folder holding posenc/v1/posenc.proto; default the one shipped. */
  protoRoot?: string;
  /**
   * table() reads the table from the server's shared-memory file
   * (posenc_server --shm_dir) when it runs on the server's host; elsewhere
   * it gets the bytes, with no error. A file that is not the server's
   * rejects with DATA_LOSS. See docs/shared_memory.md. Default false.
   */
  sharedMemory?: boolean;
}

/** Per-call options. */
export interface CallOptions {
  timeoutMs?: number;
}

export interface RowsOptions extends CallOptions {
  /** First position; default 0. */
  start?: number;
  /** One past the last position; default maxLen. */
  end?: number;
}

export interface BatchesOptions extends RowsOptions {
  /** Rows per message; 0 (default) lets the server pick about 64 KiB. */
  rowsPerBatch?: number;
}

/** uint64 counters come as BigInt; fields the server adds later appear too. */
export interface CacheStats {
  hits: bigint;
  misses: bigint;
  evictions: bigint;
  residentBytes: bigint;
  entries: bigint;
  budgetBytes: bigint;
  computations: bigint;
  [field: string]: bigint | number | string;
}

export interface ServerInfo {
  version: string;
  uptimeSeconds: number;
  maxD: number;
  maxLenLimit: number;
  maxRowsPerRequest: number;
  maxMessageBytes: bigint;
  [field: string]: bigint | number | string;
}

export interface MethodStats {
  /** 'GetTable', ... */
  method: string;
  ok: bigint;
  errors: bigint;
  [field: string]: bigint | number | string;
}

export interface Stats {
  cache: CacheStats;
  server: ServerInfo;
  methods: MethodStats[];
}

/** One channel to a posenc server. Reuse it; close() when done. */
export class PosencClient {
  /** @param target 'host:port' of the server. */
  constructor(target: string, options?: PosencClientOptions);
  /** Default deadline of each call, in ms. */
  timeoutMs: number;
  /**
   * Whether table() asks for shared memory: options.sharedMemory, until a
   * path's directory cannot be opened (not the server's host).
   */
  sharedMemory: boolean;
  close(): void;
  /**
   * The whole table, shape [maxLen, d]; with options.sharedMemory, read from
   * the server's shared-memory file when it can be opened.
   */
  table(spec: TableSpec, options?: CallOptions): Promise<Tensor>;
  /** Rows at `positions` in that order (repeats allowed), shape [n, d]. */
  gather(spec: TableSpec, positions: number[],
         options?: CallOptions): Promise<Tensor>;
  /**
   * Rows of real-valued points, shape [points, encodingWidth(spec)]:
   * `positions` holds spec.coordinates numbers per point, flat
   * (point-major) or as an array of points. No routing key is sent.
   */
  encode(spec: EncodingSpec,
         positions: Iterable<number> | Iterable<Iterable<number>>,
         options?: CallOptions): Promise<Tensor>;
  /**
   * Rows of an integer grid's points: per coordinate a fixed id or
   * [start, count], row-major (EncodeRequest.grid).
   */
  encodeGrid(spec: EncodingSpec, grid: Iterable<number | [number, number]>,
             options?: CallOptions): Promise<Tensor>;
  /**
   * The spec of a library call named with its own arguments, or of a
   * model's config.json (options.configJson); see docs/presets.md. Pass
   * `spec` to table / gather / rows / batches (kind 'table') or encode.
   */
  resolvePreset(preset: string,
                args?: Record<string, number | boolean | string | number[]>,
                options?: CallOptions & { configJson?: string; dtype?: string }):
      Promise<ResolvedPreset>;
  /** Cache counters, call counts and limits. */
  stats(options?: CallOptions): Promise<Stats>;
  /** { position, row } (row shape [d]) over [start, end). */
  rows(spec: TableSpec, options?: RowsOptions):
      AsyncGenerator<{ position: number; row: Tensor }, void, undefined>;
  /** { start, batch } (batch shape [rows, d]) over [start, end). */
  batches(spec: TableSpec, options?: BatchesOptions):
      AsyncGenerator<{ start: number; batch: Tensor }, void, undefined>;
}

/** The one error type every call rejects or throws with. */
export class PosencError extends Error {
  constructor(code: number, details: string);
  name: 'PosencError';
  /** Numeric gRPC status code, e.g. 3. */
  code: number;
  /** Canonical name, e.g. 'INVALID_ARGUMENT'. */
  codeName: string;
  /** The server's message. */
  details: string;
  /** Wraps a grpc-js ServiceError (or passes a PosencError through). */
  static from(error: unknown): PosencError;
}

/** Exact value of bfloat16 bits. */
export function bfloat16ToNumber(bits: number): number;
/** Exact value of IEEE binary16 bits. */
export function float16ToNumber(bits: number): number;
/**
 * A float32, float16 or bfloat16 tensor's values as a Float32Array, exactly
 * (float32's `data` itself); throws a TypeError for float64.
 */
export function toFloat32Array(tensor: Tensor): Float32Array;

/** The metadata key of a table call's routing key: 'x-posenc-table'. */
export const ROUTING_KEY_HEADER: 'x-posenc-table';
/**
 * The routing key every table call sends as x-posenc-table metadata:
 * `d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>`
 * (every field but maxLen, defaults resolved, base as String(base)), then
 * `;prf=<x>` and `;rope=<type>;<field>=<value>...` for RoPE specs.
 */
export function routingKey(spec: TableSpec): string;
/** Channels per row of the spec's tables (see TableSpec). */
export function rowWidth(spec: TableSpec): number;
/** Channels per row of an encoding's rows (see EncodingSpec). */
export function encodingWidth(spec: EncodingSpec): number;
/**
 * FNV-1a 64 of the values' little-endian float64 bytes, 16 hex digits (the
 * routing key's shortFactor / longFactor).
 */
export function fnv1a64Hex(values: Iterable<number>): string;

/** A preset resolved by the server (PosencClient.resolvePreset). */
export interface ResolvedPreset {
  /** The server's spec, sent as is by the table calls or encode. */
  spec: TableSpec & EncodingSpec;
  kind: 'table' | 'encoding';
  /** The preset resolved (the one a config chose when none was named). */
  name: string;
  /** Library, version followed, file and function. */
  reproduces: string;
}
