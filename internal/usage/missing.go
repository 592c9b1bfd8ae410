package usage

import (
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
)

// missingKeys counts the evaluations of keys that the set in force does
// not define, in the counter's window. Each is counted in a tally that the
// flag set keeps with its error for the key, which the evaluation found
// already: a tally joins the window, under Counter.mu, on the key's first
// count in it. A key the set keeps no tally for (a set names a bounded
// number of missing keys) is only noted as dropped.
type missingKeys struct {
	window atomic.Pointer[missingWindow]
	// windows numbers the windows, for the tallies; current is the
	// number of the window in force, read by every tallied count.
	windows, current atomic.Uint64
}

// missingWindow is one window's tallies by key, under Counter.mu, and a
// bitmap of the hashes of the keys that did not fit.
type missingWindow struct {
	id      uint64
	tallies map[string][]*atomic.Uint64
	dropped [droppedBits / 64]atomic.Uint64
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
	m.window.Store(w)
	m.current.Store(w.id)
	for _, ts := range old {
		for _, n := range ts {
			n.Swap(0)
		}
	}
}

// tallied counts one evaluation of key in count, whose window is not the
// one in force: the tally joins it, if the window has room for its key.
func (m *missingKeys) tallied(key string, count, window *atomic.Uint64, c *Counter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := m.window.Load()
	switch window.Load() {
	case w.id:
	case w.id | droppedWindow:
		return
	default:
		if _, known := w.tallies[key]; !known && len(w.tallies) >= MaxMissingKeys {
			w.drop(key)
			window.Store(w.id | droppedWindow)
			return
		}
		// The caller's key may be a buffer it reuses.
		w.tallies[strings.Clone(key)] = append(w.tallies[key], count)
		window.Store(w.id)
	}
	count.Add(1)
}

// snapshot returns the counts of the window's keys, and an estimate of
// how many more were dropped; under Counter.mu.
func (m *missingKeys) snapshot() (map[string]uint64, uint64) {
	w := m.window.Load()
	out := map[string]uint64{}
	for key, ts := range w.tallies {
		for _, n := range ts {
			if v := n.Load(); v > 0 {
				out[key] += v
			}
		}
	}
	return out, w.droppedKeys()
}

// drop notes key as dropped; it takes no lock.
func (w *missingWindow) drop(key string) {
	h := maphash.String(w.seed, key) % droppedBits
	w.dropped[h/64].Or(1 << (h % 64))
}

// droppedKeys estimates the distinct keys drop saw by linear counting:
// with z of m bits still zero, -m·ln(z/m). It is exact for the few keys a
// window usually drops; a full bitmap counts as what fills it.
func (w *missingWindow) droppedKeys() uint64 {
	set := 0
	for i := range w.dropped {
		set += bits.OnesCount64(w.dropped[i].Load())
	}
	m := float64(droppedBits)
	zero := max(m-float64(set), 1)
	return uint64(math.Round(-m * math.Log(zero/m)))
}
