package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

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
