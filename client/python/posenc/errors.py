"""PosencError: the one exception type every posenc call raises."""

import grpc


class PosencError(Exception):
    """A failed call: the gRPC status code and the server's message.

    Attributes:
      code: a grpc.StatusCode, e.g. grpc.StatusCode.INVALID_ARGUMENT.
      message: the status message (names the field, value and limit).
    """

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @property
    def code_name(self) -> str:
        """The code as a string, e.g. "OUT_OF_RANGE"."""
        return self.code.name

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "PosencError":
        return cls(error.code(), error.details() or "")
