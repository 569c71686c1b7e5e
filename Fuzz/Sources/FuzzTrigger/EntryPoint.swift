import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzTrigger_main`: hand control to libFuzzer.
@_cdecl("FuzzTrigger_main")
public func FuzzTriggerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzTrigger)
}
