package usage

import (
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
)

// missingKeys counts the evaluations of keys that the set in force does
// not define, in the counter's window.
type missingKeys struct {
	window atomic.Pointer[missingWindow]
}

// missingWindow is one window's missing keys. An evaluation reads keys
// without a lock; a new key replaces the map with a copy, under
// Counter.mu, which at most MaxMissingKeys keys keep cheap.
type missingWindow struct {
	keys   atomic.Pointer[map[string][]atomic.Uint64] // a count per shard, a line apart
	shards int
	// dropped is a bitmap of the hashes of the keys that did not fit,
	// under Counter.mu.
	dropped []uint64
	seed    maphash.Seed
}

const droppedBits = 1 << 16

func (m *missingKeys) reset(shards int) {
	w := &missingWindow{shards: shards, seed: maphash.MakeSeed()}
	keys := map[string][]atomic.Uint64{}
	w.keys.Store(&keys)
	m.window.Store(w)
}

// count counts one evaluation of key.
func (m *missingKeys) count(key string, c *Counter) {
	w := m.window.Load()
	n, ok := (*w.keys.Load())[key]
	if !ok {
		if n = m.add(key, c); n == nil {
			return
		}
	}
	tok := c.shards.pool.Get().(*token)
	n[tok.shard*lineWords].Add(1)
	c.shards.pool.Put(tok)
}

// add makes key's counters, or notes it as dropped when the window has
// no room for it (nil).
func (m *missingKeys) add(key string, c *Counter) []atomic.Uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := m.window.Load()
	keys := *w.keys.Load()
	if n, ok := keys[key]; ok {
		return n
	}
	if len(keys) >= MaxMissingKeys {
		w.drop(key)
		return nil
	}
	next := make(map[string][]atomic.Uint64, len(keys)+1)
	for k, n := range keys {
		next[k] = n
	}
	n := make([]atomic.Uint64, w.shards*lineWords)
	next[strings.Clone(key)] = n // the caller's key may be a buffer it reuses
	w.keys.Store(&next)
	return n
}

// snapshot returns the counts of the window's keys, and an estimate of
// how many more were dropped; under Counter.mu.
func (m *missingKeys) snapshot() (map[string]uint64, uint64) {
	w := m.window.Load()
	out := map[string]uint64{}
	for key, n := range *w.keys.Load() {
		var sum uint64
		for s := range w.shards {
			sum += n[s*lineWords].Load()
		}
		if sum > 0 {
			out[key] = sum
		}
	}
	return out, w.droppedKeys()
}

func (w *missingWindow) drop(key string) {
	if w.dropped == nil {
		w.dropped = make([]uint64, droppedBits/64)
	}
	h := maphash.String(w.seed, key) % droppedBits
	w.dropped[h/64] |= 1 << (h % 64)
}

// droppedKeys estimates the distinct keys drop saw by linear counting:
// with z of m bits still zero, -m·ln(z/m). It is exact for the few keys a
// window usually drops; a full bitmap counts as what fills it.
func (w *missingWindow) droppedKeys() uint64 {
	if w.dropped == nil {
		return 0
	}
	set := 0
	for _, word := range w.dropped {
		set += bits.OnesCount64(word)
	}
	m := float64(droppedBits)
	zero := max(m-float64(set), 1)
	return uint64(math.Round(-m * math.Log(zero/m)))
}
