package config

// ORTLibraryFile is the ONNX Runtime library's file name on Windows: the
// onnxruntime-node npm package's win32/x64 onnxruntime.dll, the Makefile's
// ORT_VERSION, which `make windows` puts beside vetlens.exe (row 3 of the
// table in install.go).
const ORTLibraryFile = "onnxruntime.dll"

// SystemORTDir is empty on Windows: there is no `make deps` install, so the
// DLL is looked for only where the flag, the environment and the
// executable's folder say.
const SystemORTDir = ""
