// The server's public API speaks in TLCP's types (subscription modes, error codes, requests):
// importing LightstreamerServer imports TLCP with it.
@_exported import TLCP
