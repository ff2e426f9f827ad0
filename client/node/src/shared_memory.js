'use strict';
// A table in the server's shared-memory directory (docs/shared_memory.md,
// "What a client does"). Node has no mmap in core and the npm mmap packages
// need a native build, so the file is read once into one Buffer; the checks
// are the same as a mapping's.

const fs = require('node:fs');
const path = require('node:path');
const { status } = require('@grpc/grpc-js');
const xxhash = require('xxhash-wasm');

const { PosencError } = require('./errors');
const { fromProto } = require('./tensor');

let hasher;  // xxhash-wasm compiles its module once, asynchronously

/** XXH64 (seed 0) of bytes, as a BigInt. */
async function xxh64(bytes) {
  hasher ??= xxhash();
  return (await hasher).h64Raw(bytes);
}

/** Ask again for the bytes; 'noDirectory': and stop asking this client. */
const FALLBACK = 'fallback';
const NO_DIRECTORY = 'noDirectory';

/**
 * Reads the SharedMemoryTensor `shm` (uint64 fields as decimal strings,
 * proto-loader's longs: String). Resolves to a Tensor, or to FALLBACK /
 * NO_DIRECTORY when the file cannot be opened (not an error); rejects with
 * DATA_LOSS when the file is not the server's or its digest differs.
 */
async function readShared(shm) {
  const offset = Number(shm.offset);
  const sizeBytes = Number(shm.sizeBytes);
  const fileBytes = Number(shm.fileBytes);
  if (!(fileBytes > 0) || offset + sizeBytes > fileBytes) {
    throw new PosencError(status.INTERNAL,
      `shared memory ${shm.path}: ${sizeBytes} bytes at offset ${offset} ` +
      `of a ${fileBytes}-byte file do not fit`);
  }
  let fd;
  try {
    fd = fs.openSync(shm.path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    // Another host or mount namespace has no such directory: stop asking.
    // A missing file alone (just evicted) changes nothing.
    try {
      fs.closeSync(fs.openSync(path.dirname(shm.path),
        fs.constants.O_RDONLY | fs.constants.O_DIRECTORY));
    } catch {
      return NO_DIRECTORY;
    }
    return FALLBACK;
  }
  let bytes;
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const differ = [];
    if ((st.mode & 0o170000n) !== 0o100000n) {
      differ.push(`not a regular file (mode ${st.mode.toString(8)})`);
    }
    if (st.uid !== BigInt(shm.ownerUid)) {
      differ.push(`owner uid ${st.uid}, want ${shm.ownerUid}`);
    }
    if (st.ino !== BigInt(shm.inode)) {
      differ.push(`inode ${st.ino}, want ${shm.inode}`);
    }
    if (st.size !== BigInt(shm.fileBytes)) {
      differ.push(`size ${st.size} bytes, want ${shm.fileBytes}`);
    }
    if ((st.mode & 0o222n) !== 0n) {
      differ.push(`writable (mode ${(st.mode & 0o7777n).toString(8)})`);
    }
    if (differ.length) {
      throw new PosencError(status.DATA_LOSS,
        `shared memory ${shm.path} is not the server's file: ` +
        differ.join(', '));
    }
    // Not from Buffer's pool: offset 0 of its own ArrayBuffer, so the
    // tensor's typed array (offset a multiple of 64) views it in place.
    bytes = Buffer.allocUnsafeSlow(fileBytes);
    for (let done = 0; done < fileBytes;) {
      const n = fs.readSync(fd, bytes, done, fileBytes - done, done);
      if (n === 0) {
        throw new PosencError(status.DATA_LOSS,
          `shared memory ${shm.path}: read ${done} of ${fileBytes} bytes`);
      }
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  const sum = await xxh64(bytes);
  if (sum !== BigInt(shm.fileXxh64)) {
    const hex = (v) => v.toString(16).padStart(16, '0');
    throw new PosencError(status.DATA_LOSS,
      `shared memory ${shm.path}: XXH64 ${hex(sum)}, ` +
      `want ${hex(BigInt(shm.fileXxh64))}`);
  }
  const tensor = fromProto({ dtype: shm.dtype, shape: shm.shape,
    data: bytes.subarray(offset, offset + sizeBytes) });
  tensor.sharedMemory = true;
  return tensor;
}

module.exports = { readShared, xxh64, FALLBACK, NO_DIRECTORY };
