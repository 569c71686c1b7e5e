import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzHTTPFront_main`: hand control to libFuzzer.
@_cdecl("FuzzHTTPFront_main")
public func FuzzHTTPFrontMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzHTTPFront)
}
