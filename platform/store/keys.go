package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Key is a stored API key. The secret itself is never stored: only the
// SHA-256 hash of the whole key string. Prefix is the key's public id.
type Key struct {
	Prefix   string    `json:"prefix"`
	Hash     []byte    `json:"hash"` // SHA-256 of the full key
	Customer string    `json:"customer"`
	Created  time.Time `json:"created"`
	// Revoked is when the key was revoked; nil while active.
	Revoked *time.Time `json:"revoked,omitempty"`
}

// Active reports whether the key has not been revoked.
func (k Key) Active() bool { return k.Revoked == nil }

// ErrExists is returned when creating a record whose id is taken.
var ErrExists = errors.New("already exists")

// KeyService stores API keys by prefix.
type KeyService struct{ db *bolt.DB }

// Create stores a new key; ErrExists when the prefix is taken.
func (s *KeyService) Create(ctx context.Context, k Key) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKeys)
		if b.Get([]byte(k.Prefix)) != nil {
			return fmt.Errorf("store: key %s: %w", k.Prefix, ErrExists)
		}
		return put(b, []byte(k.Prefix), k)
	})
}

// Get returns the key with the prefix, or ErrNotFound.
func (s *KeyService) Get(ctx context.Context, prefix string) (Key, error) {
	var k Key
	if err := ctxErr(ctx); err != nil {
		return k, err
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get([]byte(prefix))
		if v == nil {
			return fmt.Errorf("store: key %s: %w", prefix, ErrNotFound)
		}
		return json.Unmarshal(v, &k)
	})
	return k, err
}

// List returns every key, ordered by prefix.
func (s *KeyService) List(ctx context.Context) ([]Key, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out []Key
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketKeys).ForEach(func(_, v []byte) error {
			var k Key
			if err := json.Unmarshal(v, &k); err != nil {
				return fmt.Errorf("store: decode key: %w", err)
			}
			out = append(out, k)
			return nil
		})
	})
	return out, err
}

// Revoke marks the key revoked at t. Revoking twice keeps the first time.
func (s *KeyService) Revoke(ctx context.Context, prefix string, t time.Time) (Key, error) {
	var k Key
	if err := ctxErr(ctx); err != nil {
		return k, err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKeys)
		v := b.Get([]byte(prefix))
		if v == nil {
			return fmt.Errorf("store: key %s: %w", prefix, ErrNotFound)
		}
		if err := json.Unmarshal(v, &k); err != nil {
			return fmt.Errorf("store: decode key %s: %w", prefix, err)
		}
		if k.Revoked == nil {
			t := t.UTC()
			k.Revoked = &t
		}
		return put(b, []byte(prefix), k)
	})
	return k, err
}

// Customer is a billed customer. Tier is the contracted minimum tier
// (paygo unless agreed otherwise); the enterprise rates apply once the
// customer reaches the enterprise tier (by volume or by contract).
type Customer struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
	// EnterpriseSingleCents and EnterpriseSessionCents are the
	// customer's custom enterprise rates in US cents; zero means the
	// service default.
	EnterpriseSingleCents  int64     `json:"enterprise_single_cents,omitempty"`
	EnterpriseSessionCents int64     `json:"enterprise_session_cents,omitempty"`
	Created                time.Time `json:"created"`
}

// UnmarshalJSON reads a customer, also as written before amounts were
// whole cents: "enterprise_single" and "enterprise_session" in dollars
// (float64) become the nearest whole number of cents where the cents
// fields are absent.
func (c *Customer) UnmarshalJSON(b []byte) error {
	type plain Customer
	var v struct {
		plain
		LegacySingle  *float64 `json:"enterprise_single"`
		LegacySession *float64 `json:"enterprise_session"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Customer(v.plain)
	if v.LegacySingle != nil && c.EnterpriseSingleCents == 0 {
		c.EnterpriseSingleCents = dollarsToCents(*v.LegacySingle)
	}
	if v.LegacySession != nil && c.EnterpriseSessionCents == 0 {
		c.EnterpriseSessionCents = dollarsToCents(*v.LegacySession)
	}
	return nil
}

// CustomerService stores customers by name.
type CustomerService struct{ db *bolt.DB }

// Get returns the customer, or ErrNotFound.
func (s *CustomerService) Get(ctx context.Context, name string) (Customer, error) {
	var c Customer
	if err := ctxErr(ctx); err != nil {
		return c, err
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketCustomers).Get([]byte(name))
		if v == nil {
			return fmt.Errorf("store: customer %q: %w", name, ErrNotFound)
		}
		return json.Unmarshal(v, &c)
	})
	return c, err
}

// Put creates or replaces the customer.
func (s *CustomerService) Put(ctx context.Context, c Customer) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := checkParts(c.Name); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bucketCustomers), []byte(c.Name), c)
	})
}
