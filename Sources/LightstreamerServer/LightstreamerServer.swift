// The server engine: filled in by the server issue.
@_exported import TLCP
