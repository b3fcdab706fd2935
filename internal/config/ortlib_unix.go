//go:build !windows

package config

// ORTLibraryFile is the ONNX Runtime library's file name: what `make deps`
// installs and the Debian package ships (the Makefile's ORT_VERSION).
const ORTLibraryFile = "libonnxruntime.so.1.30.0"

// SystemORTDir is where `make deps` installs ORTLibraryFile, the last place
// searched.
const SystemORTDir = "/usr/local/lib/vetlens"
