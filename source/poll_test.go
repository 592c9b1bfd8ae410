package source

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

// staticFetcher answers doc, always.
type staticFetcher struct{ doc []byte }

func (f staticFetcher) Fetch(context.Context, Version) ([]byte, Version, error) {
	return f.doc, Version{ETag: `"1"`}, nil
}

func TestNewPoll(t *testing.T) {
	f := staticFetcher{[]byte(`{"flags": {}}`)}
	for _, tt := range []struct {
		name string
		cfg  PollConfig
		err  string
	}{
		{"no fetcher", PollConfig{Origin: "o"}, "Fetcher is required"},
		{"no origin", PollConfig{Fetcher: f}, "Origin is required"},
		{"negative interval", PollConfig{Fetcher: f, Origin: "o", Interval: -time.Second}, "must not be negative, got -1s"},
	} {
		if _, err := NewPoll(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
	p, err := NewPoll(PollConfig{Fetcher: f, Origin: "mem://flags"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Origin() != "mem://flags" || p.Interval() != flagddefault.PollInterval {
		t.Errorf("origin %q, interval %v; want the origin given and flagd's %v", p.Origin(), p.Interval(), flagddefault.PollInterval)
	}
	if p, _ := NewPoll(PollConfig{Fetcher: f, Origin: "o", Interval: time.Minute}); p.Interval() != time.Minute {
		t.Errorf("interval %v, want the one given", p.Interval())
	}
}
