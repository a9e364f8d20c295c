package worker

import (
	"fmt"
	"math/rand/v2"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// OMB draws keys from 10,000 random 7-byte keys.
const (
	keyPoolSize = 10000
	keyLength   = 7
)

// KeyDistributor hands out message keys as OMB's distributors do. Each
// producer owns one (they are not safe for concurrent use).
type KeyDistributor interface {
	// Next returns the key of the next message; nil means no key.
	Next() []byte
}

// NewKeyDistributor returns the distributor named by the workload.
func NewKeyDistributor(kind v1alpha1.KeyDistributor, rng *rand.Rand) (KeyDistributor, error) {
	switch kind {
	case "", v1alpha1.KeyNone:
		return noKey{}, nil
	case v1alpha1.KeyRoundRobin:
		return &roundRobin{keys: keyPool(rng)}, nil
	case v1alpha1.KeyRandomNano:
		return &randomKey{keys: keyPool(rng), rng: rng}, nil
	default:
		return nil, fmt.Errorf("spec.workload.keyDistributor %q is unknown; use NO_KEY, KEY_ROUND_ROBIN or RANDOM_NANO", kind)
	}
}

const keyAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func keyPool(rng *rand.Rand) [][]byte {
	keys := make([][]byte, keyPoolSize)
	for i := range keys {
		k := make([]byte, keyLength)
		for j := range k {
			k[j] = keyAlphabet[rng.IntN(len(keyAlphabet))]
		}
		keys[i] = k
	}
	return keys
}

type noKey struct{}

func (noKey) Next() []byte { return nil }

type roundRobin struct {
	keys [][]byte
	i    int
}

func (r *roundRobin) Next() []byte {
	k := r.keys[r.i]
	r.i++
	if r.i == len(r.keys) {
		r.i = 0
	}
	return k
}

type randomKey struct {
	keys [][]byte
	rng  *rand.Rand
}

func (r *randomKey) Next() []byte { return r.keys[r.rng.IntN(len(r.keys))] }
