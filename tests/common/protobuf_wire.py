"""The protobuf wire format by hand, for scripts that speak gRPC without
generated code (tests/integration/reflection_check.py,
bench/attacks/h2_attacks.py): varints and length-delimited fields."""


def varint(n):
    """n (>= 0) as a base-128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(buf, pos):
    """The varint at buf[pos:]: (its value, the index after it);
    ValueError if it is truncated or longer than 64 bits."""
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def pb_bytes(field, data):
    """Field `field` holding the bytes `data` (wire type 2)."""
    return varint(field << 3 | 2) + varint(len(data)) + data
