package evaluator

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flagsnap/flagsnap/internal/keyed"
	"github.com/flagsnap/flagsnap/internal/suggest"
)

// MaxNamedMissingKeys is how many missing keys a flag set keeps an error
// naming the key for (see NotFound).
const MaxNamedMissingKeys = 1000

// missingKeys keeps the errors of the keys asked of a flag set that it
// does not define. An application that asks for a missing flag does so on
// every evaluation, and the error is worked out once: reading it takes no
// lock and allocates nothing. The keys are hashed as the flag index hashes
// them, so an evaluation hashes a missing key once.
type missingKeys struct {
	table atomic.Pointer[keyed.Table[*Error]]
	mu    sync.Mutex // serialises the copies
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
	if err, ok := t.Get(key, h); ok {
		return err
	}
	if t.Len() >= MaxNamedMissingKeys {
		return ErrFlagNotFound
	}
	return m.add(key, h, s.notFoundError(key))
}

// ForgetMissingKeys drops the errors NotFound keeps, so that the keys past
// MaxNamedMissingKeys are named again: their caller counts missing keys
// by window, and starts a new one.
func (s *FlagSet) ForgetMissingKeys() {
	if m := s.missing; m != nil {
		m.mu.Lock()
		m.table.Store(nil)
		m.mu.Unlock()
	}
}

// add keeps err as the error of key, of hash h, unless another is kept
// already or there is no room left.
func (m *missingKeys) add(key string, h uint64, err *Error) *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.table.Load()
	if kept, ok := t.Get(key, h); ok {
		return kept
	}
	if t.Len() >= MaxNamedMissingKeys {
		return ErrFlagNotFound
	}
	m.table.Store(t.With(err.Flag, h, err))
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
