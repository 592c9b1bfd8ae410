package evaluator

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// maxNamedMissingKeys is how many missing keys a flag set keeps an error
// naming the key for (see NotFound).
const maxNamedMissingKeys = 1000

// missingKeys keeps the errors of the keys asked of a flag set that it
// does not define. An application that asks for a missing flag does so on
// every evaluation, and the error is worked out once: reading it takes no
// lock and allocates nothing.
type missingKeys struct {
	// errs is replaced by a copy with one more error, never written to.
	errs atomic.Pointer[map[string]*Error]
	mu   sync.Mutex // serialises the copies
}

// NotFound is the error of an evaluation of key, which s does not define:
// `flag "KEY" not found`, with `; did you mean "OTHER"?` when one of the
// set's keys is close to it. The first time a key is asked for, the error
// is made (and the set's keys searched); it is kept and shared after. Past
// a thousand keys, it is ErrFlagNotFound, so that an application that
// asks for ever new keys costs neither memory nor time.
func (s *FlagSet) NotFound(key string) *Error {
	m := s.missing
	if m == nil {
		return ErrFlagNotFound
	}
	errs := m.kept()
	if err, ok := errs[key]; ok {
		return err
	}
	if len(errs) >= maxNamedMissingKeys {
		return ErrFlagNotFound
	}
	return m.add(s.notFoundError(key))
}

// ForgetMissingKeys drops the errors NotFound keeps, so that the keys past
// the thousandth are named again: their caller counts missing keys by
// window, and starts a new one.
func (s *FlagSet) ForgetMissingKeys() {
	if m := s.missing; m != nil {
		m.mu.Lock()
		m.errs.Store(nil)
		m.mu.Unlock()
	}
}

// kept is the errors kept, by key; nil when there are none.
func (m *missingKeys) kept() map[string]*Error {
	if errs := m.errs.Load(); errs != nil {
		return *errs
	}
	return nil
}

// add keeps err as the error of its key, unless another is kept already
// or there is no room left.
func (m *missingKeys) add(err *Error) *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs := m.kept()
	if kept, ok := errs[err.Flag]; ok {
		return kept
	}
	if len(errs) >= maxNamedMissingKeys {
		return ErrFlagNotFound
	}
	next := make(map[string]*Error, len(errs)+1)
	maps.Copy(next, errs)
	next[err.Flag] = err
	m.errs.Store(&next)
	return err
}

// notFoundError makes the error NotFound keeps for key.
func (s *FlagSet) notFoundError(key string) *Error {
	// A copy: the caller's key may be a buffer it reuses.
	key = strings.Clone(key)
	var hint string
	if len(s.index.flags) <= suggest.MaxCandidates {
		// Keys also sorts them, which changes no suggestion (Nearest
		// answers the one closest key in any order) and is done once a key.
		hint = suggest.Hint(key, s.Keys())
	}
	return notFound(key, hint)
}
