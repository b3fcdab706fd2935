package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"vetlens/app/repo"
)

// KeyPrefixLen is the length of a key's public id (hex characters).
const KeyPrefixLen = 8

// keyTag starts every VetLens API key: "vl_<prefix>_<secret>".
const keyTag = "vl_"

// Caller is an authenticated API client.
type Caller struct {
	Customer  string
	KeyPrefix string
}

// ErrInvalidKey means the key is unknown, malformed or revoked.
var ErrInvalidKey = &Error{Kind: KindUnauthorized, Msg: "invalid API key"}

// ErrMissingKey means no key was sent.
var ErrMissingKey = &Error{Kind: KindUnauthorized, Msg: "missing API key"}

// KeyInfo is a key as listed: never the secret. Its wire body (the admin
// socket's) is admin.KeyInfo, which has the same fields.
type KeyInfo struct {
	Prefix   string
	Customer string
	Tier     string
	Created  string
	Status   string // active or revoked
	// Rechecks is how many free recheck_24h answers the key was given in
	// the current month (UTC), so a clinic's operator can see a key
	// measuring many radiographs under one uuid (issue 46).
	Rechecks int
}

func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// PrefixOf returns the public id of a key string, or "" when it is not
// shaped like a VetLens key.
func PrefixOf(key string) string {
	rest, ok := strings.CutPrefix(key, keyTag)
	if !ok || len(rest) < KeyPrefixLen+2 || rest[KeyPrefixLen] != '_' {
		return ""
	}
	p := rest[:KeyPrefixLen]
	if _, err := hex.DecodeString(p); err != nil {
		return ""
	}
	return p
}

// CreateKey issues a key for customer, creating the customer at tier
// (default paygo) when new; an existing customer keeps its tier unless
// tier is given. It returns the key string, which is shown once and
// stored only as its SHA-256 hash.
func (s *Accounts) CreateKey(ctx context.Context, customer string, tier Tier) (string, KeyInfo, error) {
	customer = strings.TrimSpace(customer)
	if customer == "" || !utf8.ValidString(customer) || len(customer) > 200 {
		return "", KeyInfo{}, errf(KindInvalid, "customer name must be 1-200 bytes of UTF-8")
	}
	if customer == DesktopCustomer {
		return "", KeyInfo{}, errf(KindInvalid, "customer name %q is reserved for this installation's desktop app", DesktopCustomer)
	}
	if tier != "" && !tier.Valid() {
		return "", KeyInfo{}, errf(KindInvalid, "unknown tier %q (paygo, starter, professional, enterprise)", tier)
	}
	now := s.clock.Now().UTC()
	c, err := s.repos.Customers.Get(ctx, customer)
	switch {
	case errors.Is(err, repo.ErrNotFound):
		c = repo.Customer{Name: customer, Tier: string(TierPaygo), Created: now}
		if tier != "" {
			c.Tier = string(tier)
		}
		if err := s.repos.Customers.Put(ctx, c); err != nil {
			return "", KeyInfo{}, fmt.Errorf("create key: %w", err)
		}
	case err != nil:
		return "", KeyInfo{}, fmt.Errorf("create key: %w", err)
	case tier != "" && string(tier) != c.Tier:
		c.Tier = string(tier)
		if err := s.repos.Customers.Put(ctx, c); err != nil {
			return "", KeyInfo{}, fmt.Errorf("create key: %w", err)
		}
	}
	for range 5 {
		var p [KeyPrefixLen / 2]byte
		var secret [32]byte
		rand.Read(p[:])
		rand.Read(secret[:])
		prefix := hex.EncodeToString(p[:])
		key := keyTag + prefix + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
		k := repo.Key{Prefix: prefix, Hash: hashKey(key), Customer: customer, Created: now}
		err := s.repos.Keys.Create(ctx, k)
		if errors.Is(err, repo.ErrExists) {
			continue
		}
		if err != nil {
			return "", KeyInfo{}, fmt.Errorf("create key: %w", err)
		}
		return key, keyInfo(k, c.Tier), nil
	}
	return "", KeyInfo{}, errors.New("create key: no free prefix after 5 tries")
}

func keyInfo(k repo.Key, tier string) KeyInfo {
	st := "active"
	if !k.Active() {
		st = "revoked"
	}
	return KeyInfo{Prefix: k.Prefix, Customer: k.Customer, Tier: tier, Created: k.Created.UTC().Format("2006-01-02T15:04:05Z"), Status: st}
}

// ListKeys lists every key (never secrets).
func (s *Accounts) ListKeys(ctx context.Context) ([]KeyInfo, error) {
	ks, err := s.repos.Keys.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	out := make([]KeyInfo, 0, len(ks))
	for _, k := range ks {
		tier := ""
		if c, err := s.repos.Customers.Get(ctx, k.Customer); err == nil {
			tier = c.Tier
		}
		info := keyInfo(k, tier)
		if info.Rechecks, err = s.repos.Ledger.RecheckCount(ctx, k.Prefix, Month(s.clock.Now())); err != nil {
			return nil, fmt.Errorf("list keys: %w", err)
		}
		out = append(out, info)
	}
	return out, nil
}

// MinRevokePrefixLen is the fewest hex digits of a key's PREFIX that
// RevokeKey accepts as the beginning of a PREFIX.
const MinRevokePrefixLen = 4

// RevokeKey revokes one key; it takes effect at once. ref names the key
// as a clinic has it: the PREFIX shown by ListKeys ("200ea352"), the
// beginning of that PREFIX (at least MinRevokePrefixLen hex digits) when
// only one key starts so, the key's own beginning ("vl_200ea352", with or
// without part of the secret after it) or the whole key, whose secret
// must match. An unknown reference is KindNotFound, one that fits several
// keys or a malformed one KindInvalid.
func (s *Accounts) RevokeKey(ctx context.Context, ref string) (KeyInfo, error) {
	prefix, err := s.resolveKeyRef(ctx, strings.TrimSpace(ref))
	if err != nil {
		return KeyInfo{}, err
	}
	k, err := s.repos.Keys.Revoke(ctx, prefix, s.clock.Now())
	if errors.Is(err, repo.ErrNotFound) {
		return KeyInfo{}, errf(KindNotFound, "no key with prefix %q", prefix)
	}
	if err != nil {
		return KeyInfo{}, fmt.Errorf("revoke key: %w", err)
	}
	return keyInfo(k, ""), nil
}

// resolveKeyRef turns RevokeKey's reference into the PREFIX of exactly
// one stored key.
func (s *Accounts) resolveKeyRef(ctx context.Context, ref string) (string, error) {
	if p := PrefixOf(ref); p != "" && len(ref) == len(keyTag)+KeyPrefixLen+1+keySecretLen {
		// The whole key: revoke only when it is the key stored.
		k, err := s.repos.Keys.Get(ctx, p)
		if errors.Is(err, repo.ErrNotFound) || err == nil && subtle.ConstantTimeCompare(k.Hash, hashKey(ref)) != 1 {
			return "", errf(KindNotFound, "no key matches the key given (prefix %q)", p)
		}
		if err != nil {
			return "", fmt.Errorf("revoke key: %w", err)
		}
		return p, nil
	}
	hexPart := ref
	if rest, ok := strings.CutPrefix(ref, keyTag); ok {
		// The key's own beginning: vl_PREFIX, perhaps with part of the secret.
		hexPart, _, _ = strings.Cut(rest, "_")
		if len(hexPart) != KeyPrefixLen {
			return "", errf(KindInvalid, "%q is not the beginning of a key: want %s and %d hex digits", ref, keyTag, KeyPrefixLen)
		}
	}
	hexPart = strings.ToLower(hexPart)
	if len(hexPart) < MinRevokePrefixLen || len(hexPart) > KeyPrefixLen || !isHex(hexPart) {
		return "", errf(KindInvalid, "%q is not a key prefix: give the PREFIX from keys list (%d hex digits, or its first %d or more), the key's beginning (%sPREFIX) or the whole key", ref, KeyPrefixLen, MinRevokePrefixLen, keyTag)
	}
	if len(hexPart) == KeyPrefixLen {
		return hexPart, nil
	}
	ks, err := s.repos.Keys.List(ctx)
	if err != nil {
		return "", fmt.Errorf("revoke key: %w", err)
	}
	var found []string
	for _, k := range ks {
		if strings.HasPrefix(k.Prefix, hexPart) {
			found = append(found, k.Prefix)
		}
	}
	switch len(found) {
	case 0:
		return "", errf(KindNotFound, "no key with prefix %q", hexPart)
	case 1:
		return found[0], nil
	}
	return "", errf(KindInvalid, "prefix %q is ambiguous: it starts %d keys (%s); give more digits", hexPart, len(found), strings.Join(found, ", "))
}

// keySecretLen is the length of a key's secret: 32 random bytes in
// unpadded base64url.
const keySecretLen = 43

// isHex reports whether s is lower-case hex digits only.
func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SetEnterpriseRates sets the customer's custom enterprise rates (0: the
// service default); an amount outside 0..MaxCents is KindInvalid.
func (s *Accounts) SetEnterpriseRates(ctx context.Context, customer string, r Rate) error {
	if err := r.check(); err != nil {
		return &Error{Kind: KindInvalid, Msg: "enterprise rates: " + err.Error(), Err: err}
	}
	c, err := s.repos.Customers.Get(ctx, customer)
	if err != nil {
		return fmt.Errorf("set enterprise rates: %w", err)
	}
	c.EnterpriseSingleCents, c.EnterpriseSessionCents = int64(r.Single), int64(r.Session)
	if err := s.repos.Customers.Put(ctx, c); err != nil {
		return fmt.Errorf("set enterprise rates: %w", err)
	}
	return nil
}

// Authenticate resolves an API key: ErrMissingKey for "", ErrInvalidKey
// for an unknown, malformed or revoked key. The stored hash is compared
// in constant time.
func (s *Accounts) Authenticate(ctx context.Context, key string) (Caller, error) {
	if key == "" {
		return Caller{}, ErrMissingKey
	}
	prefix := PrefixOf(key)
	if prefix == "" {
		return Caller{}, ErrInvalidKey
	}
	k, err := s.repos.Keys.Get(ctx, prefix)
	if errors.Is(err, repo.ErrNotFound) {
		return Caller{}, ErrInvalidKey
	}
	if err != nil {
		return Caller{}, fmt.Errorf("authenticate: %w", err)
	}
	if subtle.ConstantTimeCompare(k.Hash, hashKey(key)) != 1 || !k.Active() {
		return Caller{}, ErrInvalidKey
	}
	return Caller{Customer: k.Customer, KeyPrefix: k.Prefix}, nil
}
