import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzARILine_main`: hand control to libFuzzer.
@_cdecl("FuzzARILine_main")
public func FuzzARILineMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzARILine)
}
