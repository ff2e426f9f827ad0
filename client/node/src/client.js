'use strict';
// PosencClient: promise and async-iterator API over @grpc/grpc-js.

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { PosencError } = require('./errors');
const {
  specToProto, encodingSpecToProto, routingKeyOfProto, ROUTING_KEY_HEADER,
  RESOLVED_PROTO,
} = require('./spec');
const { fromProto } = require('./tensor');
const { readShared, FALLBACK, NO_DIRECTORY } = require('./shared_memory');

// The proto shipped in the package (npm pack copies it to proto/), else,
// in a checkout, the repository's proto/ (this file is
// client/node/src/client.js).
const PACKAGED_PROTO_ROOT = path.resolve(__dirname, '..', 'proto');
const DEFAULT_PROTO_ROOT = fs.existsSync(
  path.join(PACKAGED_PROTO_ROOT, 'posenc', 'v1', 'posenc.proto')) ?
  PACKAGED_PROTO_ROOT : path.resolve(__dirname, '..', '..', '..', 'proto');

// The table calls, which carry the routing key (Encode does not: nothing
// is cached, any replica answers).
const TABLE_METHODS = new Set(['getTable', 'streamRows', 'streamBatches',
                               'getRows']);

// Tables can be 64 MiB and more; accept up to 1 GiB per message.
const MAX_RECEIVE_BYTES = 1 << 30;

function loadService(protoRoot) {
  const definition = protoLoader.loadSync('posenc/v1/posenc.proto', {
    includeDirs: [protoRoot],
    keepCase: false,  // maxLen, rowsPerBatch, ...
    longs: String,    // uint64 stats counters without precision loss
    enums: String,    // 'DTYPE_FLOAT32', ...
    defaults: true,   // unset scalars and repeated fields read as 0 / []
    oneofs: true,     // proto3 `optional` (StreamRowsRequest.end) presence
  });
  return grpc.loadPackageDefinition(definition).posenc.v1.PositionalEncoding;
}

// uint64 fields of GetStatsResponse, as BigInt.
function statsFromProto(response) {
  const big = (object) => Object.fromEntries(Object.entries(object).map(
    ([key, value]) => [key, typeof value === 'string' && /^\d+$/.test(value) ?
      BigInt(value) : value]));
  return {
    cache: big(response.cache ?? {}),
    server: big(response.server ?? {}),
    methods: response.methods.map(big),
  };
}

class PosencClient {
  /**
   * @param {string} target 'host:port' of the server
   * @param {object} [options]
   * @param {number} [options.timeoutMs=30000] deadline of each call (a
   *     stream counts as one call); every method takes { timeoutMs } too
   * @param {grpc.ChannelCredentials} [options.credentials] default plaintext
   * @param {string} [options.protoRoot] folder holding posenc/v1/posenc.proto
   * @param {boolean} [options.sharedMemory=false] table() reads the table
   *     from the server's shared-memory file (posenc_server --shm_dir) when
   *     on its host, else gets the bytes (docs/shared_memory.md)
   */
  constructor(target, options = {}) {
    const Service = loadService(options.protoRoot ?? DEFAULT_PROTO_ROOT);
    this.timeoutMs = options.timeoutMs ?? 30000;
    // Asks for shared memory until a path's directory cannot be opened
    // (not the server's host).
    this.sharedMemory = Boolean(options.sharedMemory);
    this.stub = new Service(
      target, options.credentials ?? grpc.credentials.createInsecure(),
      { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES });
  }

  close() {
    this.stub.close();
  }

  /**
   * The whole table: { dtype, shape: [maxLen, width], data, bytes }, and
   * sharedMemory: true when read from the server's shared-memory file.
   */
  async table(spec, options) {
    const request = { spec: specToProto(spec) };
    if (this.sharedMemory) {
      const response = await this.unary(
        'getTable', { ...request, acceptSharedMemory: true }, options);
      if (!response.sharedMemory) return fromProto(response.table);
      const tensor = await readShared(response.sharedMemory);
      if (tensor !== FALLBACK && tensor !== NO_DIRECTORY) return tensor;
      if (tensor === NO_DIRECTORY) this.sharedMemory = false;
    }
    const response = await this.unary('getTable', request, options);
    return fromProto(response.table);
  }

  /** Rows at `positions` in that order (repeats allowed), shape [n, width]. */
  async gather(spec, positions, options) {
    const response = await this.unary(
      'getRows', { spec: specToProto(spec), positions }, options);
    return fromProto(response.rows);
  }

  /**
   * Rows of real-valued points (timesteps, coordinates), shape
   * [points, encodingWidth(spec)]. `positions`: spec.coordinates numbers per
   * point, point-major, flat or as an array of points; each is sent as the
   * exact double it is. No routing key is sent.
   */
  async encode(spec, positions, options) {
    const request = {
      spec: encodingSpecToProto(spec),
      positions: Array.from(positions, (p) =>
        (p !== null && typeof p === 'object' ? Array.from(p, Number) :
          [Number(p)])).flat(),
    };
    const response = await this.unary('encode', request, options);
    return fromProto(response.embeddings);
  }

  /**
   * Rows of the integer points of a grid (an image's patch ids): one entry
   * per coordinate, a number (a fixed id) or [start, count]; row-major, the
   * last coordinate fastest. A FLUX h x w latent: [0, [0, h], [0, w]].
   */
  async encodeGrid(spec, grid, options) {
    const axes = Array.from(grid, (a) => (Array.isArray(a) ?
      { start: Number(a[0]), count: Number(a[1]) } :
      { start: Number(a), count: 1 }));
    const request = { spec: encodingSpecToProto(spec), grid: { axes } };
    const response = await this.unary('encode', request, options);
    return fromProto(response.embeddings);
  }

  /**
   * The spec of a library call named with its own arguments
   * (docs/presets.md), e.g. resolvePreset('diffusers.get_timestep_embedding',
   * { embedding_dim: 320, flip_sin_to_cos: true }), or of a model's
   * config.json text ({ configJson }), resolved by the server. Returns
   * { spec, kind: 'table' | 'encoding', name, reproduces }; pass `spec` to
   * table / gather / rows / batches or encode.
   * @param {string} preset '' to let configJson's class pick
   * @param {Object<string, *>} [args] numbers, booleans, arrays, strings
   * @param {{configJson?: string, dtype?: string, timeoutMs?: number}} [options]
   */
  async resolvePreset(preset, args = {}, options = {}) {
    const text = (v) => (Array.isArray(v) ? `[${v.map(text).join(', ')}]` :
      typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v));
    const request = {
      preset: preset ?? '',
      arguments: Object.fromEntries(
        Object.entries(args).map(([k, v]) => [k, text(v)])),
      configJson: options.configJson ?? '',
      dtype: encodingSpecToProto({ dtype: options.dtype }).dtype,
    };
    const response = await this.unary('resolvePreset', request, options);
    const kind = response.spec === 'table' ? 'table' : 'encoding';
    const proto = response[kind];
    return {
      spec: { [RESOLVED_PROTO]: proto, ...proto },
      kind,
      name: response.preset,
      reproduces: response.reproduces,
    };
  }

  /** Cache counters, call counts and limits; uint64 values as BigInt. */
  async stats(options) {
    return statsFromProto(await this.unary('getStats', {}, options));
  }

  /**
   * Async iterator of { position, row } (row shape [width]) over [start, end).
   * @param {{start?: number, end?: number, timeoutMs?: number}} [range]
   */
  async *rows(spec, { start = 0, end, timeoutMs } = {}) {
    const request = { spec: specToProto(spec), start };
    if (end !== undefined) request.end = end;
    for await (const message of this.stream('streamRows', request, timeoutMs)) {
      yield { position: message.position, row: fromProto(message.row) };
    }
  }

  /**
   * Async iterator of { start, batch } (batch shape [rows, width]) over
   * [start, end); rowsPerBatch 0 lets the server pick (about 64 KiB).
   */
  async *batches(spec, { start = 0, end, rowsPerBatch = 0, timeoutMs } = {}) {
    const request = { spec: specToProto(spec), start, rowsPerBatch };
    if (end !== undefined) request.end = end;
    for await (const message of
               this.stream('streamBatches', request, timeoutMs)) {
      yield { start: message.start, batch: fromProto(message.batch) };
    }
  }

  deadline(timeoutMs) {
    return Date.now() + (timeoutMs ?? this.timeoutMs);
  }

  // The routing key of a table request (x-posenc-table), so a
  // consistent-hash proxy sends each table family to one replica.
  metadata(method, request) {
    const metadata = new grpc.Metadata();
    if (TABLE_METHODS.has(method) && request.spec) {
      metadata.set(ROUTING_KEY_HEADER, routingKeyOfProto(request.spec));
    }
    return metadata;
  }

  unary(method, request, { timeoutMs } = {}) {
    return new Promise((resolve, reject) => {
      this.stub[method](request, this.metadata(method, request),
                        { deadline: this.deadline(timeoutMs) },
                        (error, response) => {
                          if (error) reject(PosencError.from(error));
                          else resolve(response);
                        });
    });
  }

  async *stream(method, request, timeoutMs) {
    const call = this.stub[method](
      request, this.metadata(method, request), { deadline: this.deadline(timeoutMs) });
    try {
      for await (const message of call) yield message;
    } catch (error) {
      throw PosencError.from(error);
    } finally {
      call.cancel();  // no-op once finished; frees an abandoned stream
    }
  }
}

module.exports = { PosencClient };
