package manifest

import (
	"testing"

	"vetlens/internal/config"
)

// TestManifestFileName: the models lookup (internal/config, which
// imports nothing of engine) looks for the file the engine reads.
func TestManifestFileName(t *testing.T) {
	if config.ManifestFile != FileName {
		t.Fatalf("config looks for %q, engine/manifest reads %q", config.ManifestFile, FileName)
	}
}
