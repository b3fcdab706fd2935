//go:build linux && cgo

package ort

import "testing"

// TestMallocArenasCapped: glibc accepted the one-arena limit when the
// test binary loaded (it links this package as the product does).
func TestMallocArenasCapped(t *testing.T) {
	if !mallocArenasCapped() {
		t.Fatal("mallopt(M_ARENA_MAX, 1) was refused at load: every ONNX Runtime thread keeps its own malloc arena")
	}
}
