import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzRequestParser_main`: hand control to libFuzzer.
@_cdecl("FuzzRequestParser_main")
public func FuzzRequestParserMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzRequestParser)
}
