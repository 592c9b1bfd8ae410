package evaluator

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// MaxNamedMissingKeys is how many missing keys a flag set keeps an error
// naming the key for (see NotFound).
const MaxNamedMissingKeys = 1000

// missingKeys keeps the errors of the keys asked of a flag set that it
// does not define. An application that asks for a missing flag does so on
// every evaluation, and the error is worked out once: reading it takes no
// lock and allocates nothing. A new key replaces the table with a copy,
// which the bound keeps cheap.
type missingKeys struct {
	table atomic.Pointer[missingTable]
	mu    sync.Mutex // serialises the copies
}

// missingTable is an immutable hash table of errors by key, at most half
// full, hashed as the flag index hashes (keyHash, with the index's seed):
// cheaper to read than a map.
type missingTable struct {
	slots []missingSlot
	mask  uint64
	n     int
}

type missingSlot struct {
	hash uint64
	err  *Error // nil for an empty slot; err.Flag is the key
}

// get returns the error kept for key, nil when there is none.
func (t *missingTable) get(key string, h uint64) *Error {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch sl := &t.slots[i]; {
		case sl.err == nil:
			return nil
		case sl.hash == h && sl.err.Flag == key:
			return sl.err
		}
	}
}

// with is a copy of t (nil: an empty table) that keeps err, of hash h, too.
func (t *missingTable) with(err *Error, h uint64) *missingTable {
	n := 1
	if t != nil {
		n += t.n
	}
	size := 2
	for size < 2*n {
		size <<= 1
	}
	next := &missingTable{slots: make([]missingSlot, size), mask: uint64(size - 1), n: n}
	next.put(missingSlot{hash: h, err: err})
	if t != nil {
		for _, sl := range t.slots {
			if sl.err != nil {
				next.put(sl)
			}
		}
	}
	return next
}

func (t *missingTable) put(sl missingSlot) {
	i := sl.hash & t.mask
	for t.slots[i].err != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i] = sl
}

// NotFound is the error of an evaluation of key, which s does not define:
// `flag "KEY" not found`, with `; did you mean "OTHER"?` when one of the
// set's keys is close to it. The first time a key is asked for, the error
// is made (and the set's keys searched); it is kept and shared after. Past
// MaxNamedMissingKeys keys, it is ErrFlagNotFound, so that an application
// that asks for ever new keys costs neither memory nor time.
func (s *FlagSet) NotFound(key string) *Error {
	return s.notFound(key, keyHash(s.index.seed, key))
}

// notFound is NotFound for key of hash h, which Evaluate has taken already.
func (s *FlagSet) notFound(key string, h uint64) *Error {
	m := s.missing
	if m == nil {
		return ErrFlagNotFound
	}
	t := m.table.Load()
	if t != nil {
		if err := t.get(key, h); err != nil {
			return err
		}
		if t.n >= MaxNamedMissingKeys {
			return ErrFlagNotFound
		}
	}
	return m.add(key, h, s.notFoundError(key))
}

// add keeps err as the error of key, of hash h, unless another is kept
// already or there is no room left.
func (m *missingKeys) add(key string, h uint64, err *Error) *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.table.Load()
	if t != nil {
		if kept := t.get(key, h); kept != nil {
			return kept
		}
		if t.n >= MaxNamedMissingKeys {
			return ErrFlagNotFound
		}
	}
	m.table.Store(t.with(err, h))
	return err
}

// notFoundError makes the error NotFound keeps for key.
func (s *FlagSet) notFoundError(key string) *Error {
	// A copy: the caller's key may be a buffer it reuses.
	key = strings.Clone(key)
	var hint string
	if s.index.n <= suggest.MaxCandidates {
		keys := make([]string, 0, s.index.n)
		for _, f := range s.index.slots {
			if f != nil {
				keys = append(keys, f.key)
			}
		}
		hint = suggest.Hint(key, keys)
	}
	return notFound(key, hint)
}
