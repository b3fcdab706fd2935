package repo

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestNewID: ids are version 7 UUIDs whose time is now, distinct, and in
// the order they were made (also within one millisecond).
func TestNewID(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = NewID()
	}
	after := time.Now().Add(time.Millisecond)
	seen := map[string]bool{}
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil || id.Version() != 7 || id.Variant() != uuid.RFC4122 || seen[s] {
			t.Fatalf("id %d %q: version %d variant %v err %v duplicate %v", i, s, id.Version(), id.Variant(), err, seen[s])
		}
		seen[s] = true
		sec, nsec := id.Time().UnixTime()
		if ts := time.Unix(sec, nsec); ts.Before(before) || ts.After(after) {
			t.Fatalf("id %d time %v outside %v..%v", i, ts, before, after)
		}
		if i > 0 && s <= ids[i-1] {
			t.Fatalf("id %d %s sorts before %s", i, s, ids[i-1])
		}
	}
}

func TestCheckParts(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		ok    bool
	}{
		{nil, true},
		{[]string{"", "a"}, true},
		{[]string{strings.Repeat("é", MaxPartLen/2)}, true},
		{[]string{"a", strings.Repeat("x", MaxPartLen+1)}, false},
		{[]string{strings.Repeat("é", MaxPartLen/2+1)}, false},
	} {
		if err := CheckParts(tc.parts...); (err == nil) != tc.ok {
			t.Errorf("CheckParts(%d parts, lengths %v) = %v, want ok=%v", len(tc.parts), lens(tc.parts), err, tc.ok)
		}
	}
}

func lens(p []string) []int {
	out := make([]int, len(p))
	for i, s := range p {
		out[i] = len(s)
	}
	return out
}

func TestNewIDAt(t *testing.T) {
	for _, ts := range []time.Time{
		time.Date(2024, 2, 29, 12, 0, 0, 987654321, time.UTC),
		time.Unix(0, 0),
		time.Date(2026, 11, 24, 3, 40, 0, 0, time.FixedZone("EET", 7200)),
	} {
		a, b := NewIDAt(ts), NewIDAt(ts)
		id, err := uuid.Parse(a)
		if err != nil || id.Version() != 7 || id.Variant() != uuid.RFC4122 || a == b {
			t.Fatalf("NewIDAt(%v) = %q, %q: %v version %d", ts, a, b, err, id.Version())
		}
		sec, nsec := id.Time().UnixTime()
		if got := time.Unix(sec, nsec); !got.Equal(ts.Truncate(time.Millisecond)) {
			t.Errorf("NewIDAt(%v) carries %v", ts, got)
		}
	}
	if early, late := NewIDAt(time.Unix(1000, 0)), NewIDAt(time.Unix(1000, 2e6)); early >= late {
		t.Errorf("ids out of time order: %s, %s", early, late)
	}
}
