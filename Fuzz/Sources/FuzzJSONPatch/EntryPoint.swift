import FuzzDriver

// SwiftPM links an executable's entry point under the name `FuzzJSONPatch_main`: hand control to libFuzzer.
@_cdecl("FuzzJSONPatch_main")
public func FuzzJSONPatchMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzDriver(argc, argv, fuzzJSONPatch)
}
