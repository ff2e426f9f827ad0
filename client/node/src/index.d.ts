// TypeScript declarations of the posenc Node client (src/index.js).

import type { ChannelCredentials } from '@grpc/grpc-js';

/** Element type of a table on the wire. */
export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
/** Where a row puts its sin and cos channels. */
export type Layout = 'interleaved' | 'concat_sin_cos' | 'concat_cos_sin' |
  'rotate_half' | 'interleaved_pairs';
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
export interface TableSpec {
  /** Channels per row (even). */
  d: number;
  /** Number of rows. */
  maxLen: number;
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
}

export interface PosencClientOptions {
  /** Deadline of each call in ms (a stream counts as one call); 30000. */
  timeoutMs?: number;
  /** Default plaintext (grpc.credentials.createInsecure()). */
  credentials?: ChannelCredentials;
  /** Folder holding posenc/v1/posenc.proto; default the one shipped. */
  protoRoot?: string;
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
  close(): void;
  /** The whole table, shape [maxLen, d]. */
  table(spec: TableSpec, options?: CallOptions): Promise<Tensor>;
  /** Rows at `positions` in that order (repeats allowed), shape [n, d]. */
  gather(spec: TableSpec, positions: number[],
         options?: CallOptions): Promise<Tensor>;
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
/**
 * FNV-1a 64 of the values' little-endian float64 bytes, 16 hex digits (the
 * routing key's shortFactor / longFactor).
 */
export function fnv1a64Hex(values: Iterable<number>): string;
