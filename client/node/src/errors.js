'use strict';
// PosencError: the one error type every posenc call rejects or throws with.

const { status } = require('@grpc/grpc-js');

const CODE_NAMES = Object.fromEntries(
  Object.entries(status).map(([name, code]) => [code, name]));

class PosencError extends Error {
  /**
   * @param {number} code gRPC status code (grpc.status.*)
   * @param {string} details the server's message
   */
  constructor(code, details) {
    const codeName = CODE_NAMES[code] ?? `CODE_${code}`;
    super(`${codeName}: ${details}`);
    this.name = 'PosencError';
    /** Numeric gRPC code, e.g. 3. */
    this.code = code;
    /** Canonical name, e.g. 'INVALID_ARGUMENT'. */
    this.codeName = codeName;
    this.details = details;
  }

  /** Wraps a grpc-js ServiceError (or passes a PosencError through). */
  static from(error) {
    if (error instanceof PosencError) return error;
    if (typeof error?.code === 'number') {
      return new PosencError(error.code, error.details ?? error.message);
    }
    return new PosencError(status.UNKNOWN, String(error?.message ?? error));
  }
}

module.exports = { PosencError };
