package flagsnap

// Provider.Usage and the counting behind it: every evaluation counts in
// the table of the flag set it was answered from.

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/usage"
)

// Usage is how the flags were evaluated since Since: which were, how often,
// with which variants, and which keys were asked for that the flags do not
// define. It marshals to JSON and back unchanged, which is what
// `flagsnap usage` reads.
type Usage = usage.Usage

// FlagUsage is how one flag was evaluated.
type FlagUsage = usage.FlagUsage

// MaxMissingKeys is how many distinct missing keys Usage keeps.
const MaxMissingKeys = usage.MaxMissingKeys

// Usage returns how the flags were evaluated since the provider's first
// Init or the last ResetUsage. It is a consistent snapshot: each flag's
// counts add up (Evaluations is its variants, its errors and the
// evaluations that served no variant). Evaluations do not wait for it,
// but for the first of a flag, which allocates its counters; it costs
// little enough per flag that a service may serve it from an HTTP
// handler. With WithoutUsage it is empty.
func (p *Provider) Usage() Usage {
	if p.usage == nil {
		return Usage{Flags: map[string]FlagUsage{}, Missing: map[string]uint64{}}
	}
	return p.usage.Snapshot(now())
}

// ResetUsage starts counting again from zero: Usage reports from now on.
// An evaluation that runs meanwhile is counted before or after, never
// both or neither.
func (p *Provider) ResetUsage() {
	if p.usage != nil {
		p.usage.Reset(now())
		// A missing key is counted in the tally the flag set keeps with
		// its error for it: a new window names keys past the set's bound
		// afresh.
		if set := p.flags(); set != nil {
			set.ForgetMissingKeys()
		}
	}
}

// now is the time Usage reports: UTC without a monotonic reading, so that
// its JSON reads back equal.
func now() time.Time { return time.Now().UTC().Round(0) }

// startUsage starts, for the run r, the goroutine that notes once a second
// which flags were evaluated; the first run starts the count.
func (p *Provider) startUsage(r *run) {
	if p.usage == nil {
		return
	}
	p.usageOnce.Do(func() { p.usage.Start(now()) })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		p.tickUsage(r.ctx)
	}()
}

// tickUsage notes every second, until ctx ends, which flags were
// evaluated since the last time: an evaluation does not read the time,
// which would cost more than counting it.
func (p *Provider) tickUsage(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.usage.Tick(now)
		}
	}
}

// countUsage returns the table that set's evaluations are counted in,
// attached: its flags take over the counts of the flags in force with the
// same keys. It logs what the flags set drops had counted. It is called
// under the run's lock, as every change of the flags in force is, so the
// flags in force are the ones set replaces.
func (p *Provider) countUsage(set *evaluator.FlagSet) *usage.Table {
	if p.usage == nil {
		return nil
	}
	t := p.usage.NewTable(set)
	removed, unused := p.usage.Attach(t)
	if len(removed) == 0 && unused == 0 {
		return t
	}
	keys := slices.Collect(maps.Keys(removed))
	// The most evaluated first: a flag removed while still in use is the
	// line worth reading.
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(removed[b].Evaluations, removed[a].Evaluations), cmp.Compare(a, b))
	})
	const maxLines = 20
	for _, k := range keys[:min(len(keys), maxLines)] {
		u := removed[k]
		p.log.Info("flag removed; its usage since "+p.usageSince(), slog.String("flag", k), slog.Uint64("evaluations", u.Evaluations),
			slog.Any("variants", u.Variants), slog.Uint64("errors", u.Errors), slog.Time("lastEvaluated", u.LastEvaluated))
	}
	if n := len(removed) + unused - min(len(keys), maxLines); n > 0 {
		p.log.Info("flags removed", slog.Int("flags", len(removed)+unused), slog.Int("notLogged", n), slog.Int("neverEvaluated", unused))
	}
	return t
}

func (p *Provider) usageSince() string {
	return p.usage.Since().Format(time.RFC3339)
}
