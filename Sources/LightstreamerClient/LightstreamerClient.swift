// The client library: filled in by the client issue.
@_exported import TLCP
