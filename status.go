package flagsnap

// SourceStatus, the health of a provider's flag source, and the counts
// behind it.

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// SourceState is the health of a provider's flag source.
type SourceState string

const (
	// SourceConnecting: no flags yet; the source is being reached.
	SourceConnecting SourceState = "connecting"
	// SourceServing: the flags in force are the source's latest.
	SourceServing SourceState = "serving"
	// SourceStale: the source is lost, within the grace period; the last
	// flags are served.
	SourceStale SourceState = "stale"
	// SourceError: the source is lost beyond the grace period, or its
	// last flag set was rejected; the last flags, if any, are served.
	SourceError SourceState = "error"
	// SourceFatal: the source gave up for good.
	SourceFatal SourceState = "fatal"
	// SourceStopped: the provider is not running (before Init, after
	// Shutdown).
	SourceStopped SourceState = "stopped"
)

// SourceStatus is the health of a provider's flag source, for dashboards
// and readiness probes.
type SourceStatus struct {
	// Source is where the flags come from: a file path, a server address
	// or unix socket, a URL (without its password), an object's URL,
	// "memory", or a custom source's type.
	Source string `json:"source"`
	// Selector is the flag set asked of a sync server, if any.
	Selector string      `json:"selector,omitempty"`
	State    SourceState `json:"state"`
	// Flags is the number of flags in force, AppliedAt when they were put
	// in force and Digest the SHA-256 of the document they came from (hex);
	// zero before the first flag set.
	Flags     int       `json:"flags"`
	AppliedAt time.Time `json:"appliedAt"`
	Digest    string    `json:"digest,omitempty"`
	// BrokenFlags counts the flags in force that answer PARSE_ERROR
	// whatever the context (a default variant that names none, variants of
	// mixed types), and PartlyBrokenFlags those with a part of the rule
	// that fails only the evaluations that reach it (an unknown operator):
	// a readiness check may refuse either.
	BrokenFlags       int `json:"brokenFlags"`
	PartlyBrokenFlags int `json:"partlyBrokenFlags"`
	// Received counts the flag sets the source delivered, Applied those
	// put in force (a set identical to the one in force counts: it is
	// applied again, at no cost) and Rejected those refused (not parsed,
	// too large).
	Received uint64 `json:"received"`
	Applied  uint64 `json:"applied"`
	Rejected uint64 `json:"rejected"`
	// Unchanged counts the polls of a URL or an object that found the
	// flags in force unchanged (a 304, or the same document), which are
	// not counted as received.
	Unchanged uint64 `json:"unchanged"`
	// Reconnects counts the times the source came back after a loss.
	Reconnects uint64 `json:"reconnects"`
	// ConfigChanges counts the PROVIDER_CONFIGURATION_CHANGED events
	// sent: for flag sets that changed flags in force, and for each
	// recovery.
	ConfigChanges uint64 `json:"configChanges"`
	// LastError is the last thing that went wrong, and when; empty (and
	// left out of the JSON) when nothing has.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// Overrides are the layers over the source (WithOverrideFile,
	// WithOverrideSource), lowest first, and Overridden the flag keys
	// whose answers come from one of them, with its Source.
	Overrides  []LayerStatus     `json:"overrides,omitempty"`
	Overridden map[string]string `json:"overridden,omitempty"`
}

// sourceStats are the counts behind SourceStatus. They outlive a run, so
// that an Init after Shutdown goes on counting.
type sourceStats struct {
	mu                                     sync.Mutex
	received, applied, rejected, reconnect uint64
	unchanged, configChanges               uint64
	digest                                 [sha256.Size]byte
	hasDigest                              bool
	lastErr                                string
	lastErrAt                              time.Time
}

// delivered counts a flag set the source delivered.
func (s *sourceStats) delivered() {
	s.mu.Lock()
	s.received++
	s.mu.Unlock()
}

// polledUnchanged counts a poll that found the flags unchanged.
func (s *sourceStats) polledUnchanged() {
	s.mu.Lock()
	s.unchanged++
	s.mu.Unlock()
}

// announcedChange counts a CONFIGURATION_CHANGED event sent.
func (s *sourceStats) announcedChange() {
	s.mu.Lock()
	s.configChanges++
	s.mu.Unlock()
}

// appliedSet counts a flag set put in force, and a reconnect when it ends
// a loss.
func (s *sourceStats) appliedSet(digest [sha256.Size]byte, recovered bool) {
	s.mu.Lock()
	s.applied++
	s.digest, s.hasDigest = digest, true
	if recovered {
		s.reconnect++
	}
	s.mu.Unlock()
}

// failed records what went wrong, and counts a rejected flag set.
func (s *sourceStats) failed(err error, rejected bool) {
	s.mu.Lock()
	if rejected {
		s.rejected++
	}
	s.lastErr, s.lastErrAt = errText(err), time.Now()
	s.mu.Unlock()
}

// SourceStatus reports the health of the flag source. It is cheap, takes
// no lock that an evaluation or the source waits on for long, and may be
// called from any goroutine.
func (p *Provider) SourceStatus() SourceStatus {
	st := SourceStatus{Source: p.origin.name, State: p.sourceState()}
	// One set for everything said of the flags in force.
	set := p.flags()
	st.Overrides, st.Overridden = p.overrideStatus(set)
	if p.origin.kind == originServer {
		// Only a sync server reads a selector; one set by a variable
		// for another source filters nothing, and is not shown.
		st.Selector = p.cfg.Selector
	}
	if set != nil {
		st.Flags = set.Len()
		st.BrokenFlags, st.PartlyBrokenFlags = set.BrokenFlags()
		st.AppliedAt = time.Unix(0, p.loadedAt.Load())
	}
	s := &p.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Received, st.Applied, st.Rejected, st.Reconnects = s.received, s.applied, s.rejected, s.reconnect
	st.Unchanged, st.ConfigChanges = s.unchanged, s.configChanges
	if s.hasDigest {
		st.Digest = hex.EncodeToString(s.digest[:])
	}
	st.LastError, st.LastErrorAt = s.lastErr, s.lastErrAt
	return st
}

// sourceState reads the run's state as SourceStatus reports it: an error
// with no flags served yet is still connecting.
func (p *Provider) sourceState() SourceState {
	r := p.currentRun()
	if r == nil {
		return SourceStopped
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.state {
	case stateStarting:
		return SourceConnecting
	case stateReady:
		return SourceServing
	case stateStale:
		return SourceStale
	case stateError, stateInitError:
		if r.p.flags() == nil {
			return SourceConnecting
		}
		return SourceError
	case stateFatal:
		return SourceFatal
	}
	return SourceConnecting
}
