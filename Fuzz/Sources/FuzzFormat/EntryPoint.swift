import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzFormat_main`: hand control to libFuzzer.
@_cdecl("FuzzFormat_main")
public func FuzzFormatMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzFormat)
}
