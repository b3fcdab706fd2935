package diskfree_test

import (
	"path/filepath"
	"testing"

	"vetlens/internal/diskfree"
)

func TestDirUsage(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"temp dir", t.TempDir(), false},
		{"missing dir", filepath.Join(t.TempDir(), "no", "such"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := diskfree.Dir{Path: tt.path}.Usage()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Usage() error = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if u.Total == 0 || u.Free > u.Total {
				t.Fatalf("Usage() = %+v: want 0 < total and free <= total", u)
			}
		})
	}
}
