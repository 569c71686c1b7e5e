import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzLineParser_main`: hand control to libFuzzer.
@_cdecl("FuzzLineParser_main")
public func FuzzLineParserMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzLineParser)
}
