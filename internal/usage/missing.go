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
	// windows numbers the windows, for the tallies; current is the
	// number of the window in force, read by every tallied count.
	windows, current atomic.Uint64
}

// missingWindow is one window's missing keys, counted in two ways. Most
// are counted in a tally that the flag set keeps with its error for the
// key, which the evaluation found already: a tally joins the window on
// the key's first count in it. The others (a set keeps a bounded number
// of such errors) are counted by key: an evaluation reads the keys
// without a lock, and a new key replaces the map with a copy, which at
// most MaxMissingKeys keys keep cheap. Both under Counter.mu.
type missingWindow struct {
	id      uint64
	tallies map[string][]*atomic.Uint64
	keys    atomic.Pointer[map[string]*atomic.Uint64]
	// dropped is a bitmap of the hashes of the keys that did not fit.
	dropped []uint64
	seed    maphash.Seed
}

const (
	droppedBits = 1 << 16
	// droppedWindow marks a tally whose key did not fit in its window.
	droppedWindow = 1 << 63
)

// reset starts a new window. The tallies of the old one are zeroed after
// the new one is in place: an evaluation that counts meanwhile is counted
// in the old window, or kept in its tally for the new one.
func (m *missingKeys) reset(old map[string][]*atomic.Uint64) {
	w := &missingWindow{id: m.windows.Add(1), tallies: map[string][]*atomic.Uint64{}, seed: maphash.MakeSeed()}
	keys := map[string]*atomic.Uint64{}
	w.keys.Store(&keys)
	m.window.Store(w)
	m.current.Store(w.id)
	for _, ts := range old {
		for _, n := range ts {
			n.Swap(0)
		}
	}
}

// tallied counts one evaluation of key in count, whose window is not the
// one in force: the tally joins it.
func (m *missingKeys) tallied(key string, count, window *atomic.Uint64, c *Counter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := m.window.Load()
	switch window.Load() {
	case w.id:
	case w.id | droppedWindow:
		return
	default:
		if _, known := w.tallies[key]; !known && !w.room(key) {
			w.drop(key)
			window.Store(w.id | droppedWindow)
			return
		}
		w.tallies[strings.Clone(key)] = append(w.tallies[key], count)
		window.Store(w.id)
	}
	count.Add(1)
}

// room reports whether the window can count one more key than it does.
func (w *missingWindow) room(key string) bool {
	keys := *w.keys.Load()
	if _, ok := keys[key]; ok {
		return true
	}
	return len(w.tallies)+len(keys) < MaxMissingKeys
}

// count counts one evaluation of key, which has no tally.
func (m *missingKeys) count(key string, c *Counter) {
	w := m.window.Load()
	n, ok := (*w.keys.Load())[key]
	if !ok {
		if n = m.add(key, c); n == nil {
			return
		}
	}
	n.Add(1)
}

// add makes key's count, or notes it as dropped when the window has no
// room for it (nil).
func (m *missingKeys) add(key string, c *Counter) *atomic.Uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := m.window.Load()
	keys := *w.keys.Load()
	if n, ok := keys[key]; ok {
		return n
	}
	if _, tallied := w.tallies[key]; !tallied && !w.room(key) {
		w.drop(key)
		return nil
	}
	next := make(map[string]*atomic.Uint64, len(keys)+1)
	for k, n := range keys {
		next[k] = n
	}
	n := new(atomic.Uint64)
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
		if v := n.Load(); v > 0 {
			out[key] = v
		}
	}
	for key, ts := range w.tallies {
		for _, n := range ts {
			if v := n.Load(); v > 0 {
				out[key] += v
			}
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
