'use strict';
// posenc: Node client of the posenc.v1.PositionalEncoding gRPC service.

const { PosencClient } = require('./client');
const { PosencError } = require('./errors');
const { bfloat16ToNumber, float16ToNumber, toFloat32Array } =
  require('./tensor');
const {
  routingKey, rowWidth, encodingWidth, fnv1a64Hex, ROUTING_KEY_HEADER,
} = require('./spec');

module.exports = {
  PosencClient, PosencError, bfloat16ToNumber, float16ToNumber, toFloat32Array,
  routingKey,
  rowWidth, encodingWidth, fnv1a64Hex, ROUTING_KEY_HEADER,
};
