package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"vetlens/app/repo"
)

// TestRevokeKeyReferences revokes keys by every reference a clinic may
// hold: the PREFIX from keys list, its unique beginning, the key's own
// beginning (vl_PREFIX, with or without part of the secret) and the whole
// key; an ambiguous, unknown or malformed reference revokes nothing.
func TestRevokeKeyReferences(t *testing.T) {
	ctx := context.Background()
	// setup creates two real keys, then a twin of the first stored under
	// a prefix sharing its first 6 digits (to make short prefixes
	// ambiguous).
	type keyed struct{ key, prefix string }
	setup := func(t *testing.T) (*Service, []keyed) {
		s, _ := newTestService(t, t0)
		var ks []keyed
		for range 2 {
			key, info, err := s.Accounts.CreateKey(ctx, "Clinic A", "")
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, keyed{key, info.Prefix})
		}
		twin := ks[0].prefix[:6] + "00"
		if twin == ks[0].prefix || twin == ks[1].prefix {
			twin = ks[0].prefix[:6] + "ff"
		}
		if err := s.Repos().Keys.Create(ctx, repo.Key{Prefix: twin, Hash: hashKey("x"), Customer: "Clinic A", Created: t0}); err != nil {
			t.Fatal(err)
		}
		return s, append(ks, keyed{"", twin})
	}
	for _, tc := range []struct {
		name string
		ref  func(ks []keyed) string
		kind Kind // KindInternal: no error
		want int  // index of the key revoked
	}{
		{"PREFIX from keys list", func(ks []keyed) string { return ks[1].prefix }, KindInternal, 1},
		{"PREFIX upper case", func(ks []keyed) string { return strings.ToUpper(ks[1].prefix) }, KindInternal, 1},
		{"key's beginning", func(ks []keyed) string { return "vl_" + ks[1].prefix }, KindInternal, 1},
		{"key's beginning and part of the secret", func(ks []keyed) string { return ks[1].key[:20] }, KindInternal, 1},
		{"whole key", func(ks []keyed) string { return ks[1].key }, KindInternal, 1},
		{"whole key with spaces", func(ks []keyed) string { return " " + ks[0].key + "\n" }, KindInternal, 0},
		{"unique PREFIX beginning", func(ks []keyed) string { return ks[1].prefix[:7] }, KindInternal, 1},
		{"ambiguous PREFIX beginning", func(ks []keyed) string { return ks[0].prefix[:6] }, KindInvalid, -1},
		{"unknown PREFIX", func(ks []keyed) string { return flip(ks[1].prefix) }, KindNotFound, -1},
		{"unknown key beginning", func(ks []keyed) string { return "vl_" + flip(ks[1].prefix) }, KindNotFound, -1},
		{"whole key with a wrong secret", func(ks []keyed) string { return ks[1].key[:len(ks[1].key)-2] + flip(ks[1].key[len(ks[1].key)-2:]) }, KindNotFound, -1},
		{"too short", func(ks []keyed) string { return ks[1].prefix[:3] }, KindInvalid, -1},
		{"not hex", func(ks []keyed) string { return "nope" }, KindInvalid, -1},
		{"key tag with a short prefix", func(ks []keyed) string { return "vl_" + ks[1].prefix[:5] }, KindInvalid, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ks := setup(t)
			ref := tc.ref(ks)
			info, err := s.Accounts.RevokeKey(ctx, ref)
			if tc.kind != KindInternal {
				if KindOf(err) != tc.kind {
					t.Fatalf("RevokeKey(%q) = %+v, %v; want kind %v", ref, info, err, tc.kind)
				}
			} else if err != nil || info.Prefix != ks[tc.want].prefix || info.Status != "revoked" {
				t.Fatalf("RevokeKey(%q) = %+v, %v; want %s revoked", ref, info, err, ks[tc.want].prefix)
			}
			list, _ := s.Accounts.ListKeys(ctx)
			for _, k := range list {
				revoked := tc.want >= 0 && k.Prefix == ks[tc.want].prefix
				if (k.Status == "revoked") != revoked {
					t.Errorf("after RevokeKey(%q): %s is %s", ref, k.Prefix, k.Status)
				}
			}
		})
	}
}

// flip changes every character of a hex or base64url string to another.
func flip(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
	}
	return string(b)
}
func TestKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	key, info, err := s.Accounts.CreateKey(ctx, "Clinic A", "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Tier != "paygo" || info.Status != "active" || PrefixOf(key) != info.Prefix {
		t.Fatalf("%+v %q", info, key)
	}
	ks, _ := s.Repos().Keys.List(ctx)
	if len(ks) != 1 || strings.Contains(fmt.Sprint(ks[0]), key[12:]) {
		t.Fatalf("stored key leaks secret: %+v", ks)
	}
	c, err := s.Accounts.Authenticate(ctx, key)
	if err != nil || c.Customer != "Clinic A" || c.KeyPrefix != info.Prefix {
		t.Fatalf("%+v %v", c, err)
	}
	forged := key[:len(key)-1] + string("AB"[strings.IndexByte("AB", key[len(key)-1])+1&1])
	for _, bad := range []string{"x", "vl_zzzzzzzz_abc", key + "x", forged, "vl_00000000_" + key[12:]} {
		if _, err := s.Accounts.Authenticate(ctx, bad); err != ErrInvalidKey {
			t.Errorf("Authenticate(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
	if _, err := s.Accounts.Authenticate(ctx, ""); err != ErrMissingKey {
		t.Errorf("empty key: %v", err)
	}
	if _, err := s.Accounts.RevokeKey(ctx, info.Prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts.Authenticate(ctx, key); err != ErrInvalidKey {
		t.Fatalf("revoked key authenticates: %v", err)
	}
	if _, err := s.Accounts.RevokeKey(ctx, "nope"); KindOf(err) != KindInvalid {
		t.Fatalf("revoke malformed: %v", err)
	}
	if _, _, err := s.Accounts.CreateKey(ctx, "x", "gold"); KindOf(err) != KindInvalid {
		t.Fatalf("bad tier: %v", err)
	}
	l, _ := s.Accounts.ListKeys(ctx)
	if len(l) != 1 || l[0].Status != "revoked" {
		t.Fatalf("%+v", l)
	}
}
