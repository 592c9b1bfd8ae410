package main

// serve's HTTP side also answers OFREP (the OpenFeature Remote Evaluation
// Protocol) at /ofrep/: a provider that follows what serve serves
// evaluates the flags for each request.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/source"
)

// ofrepPath is where OFREP is mounted; the handler finds /ofrep/v1/ below.
const ofrepPath = "/ofrep/"

// ofrepInitWait bounds the provider's first flag set, which is handed to
// it in memory: waiting longer would only hide a document it refuses.
const ofrepInitWait = 10 * time.Second

// originValues is --allow-origin, repeatable: "*" or origins as browsers
// send them in the Origin header.
type originValues []string

func (o *originValues) String() string { return strings.Join(*o, ", ") }

func (o *originValues) Set(s string) error {
	if err := checkOrigin(s); err != nil {
		return err
	}
	*o = append(*o, s)
	return nil
}

// checkOrigin accepts "*" or scheme://host[:port], with a final "/" at
// most, which the handler drops. A browser's Origin header has no path, so
// an origin written with one would never match, and the mistake would only
// show as a CORS failure in a browser console.
func checkOrigin(s string) error {
	if s == "*" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		return fmt.Errorf("want * or an origin, scheme://host[:port] without a path, not %q", s)
	}
	return nil
}

// headerMapping is one --context-from-header: the value of a request
// header becomes an attribute of the evaluation context.
type headerMapping struct {
	header, attribute string
}

// headerMappings is --context-from-header, repeatable, each HEADER=ATTRIBUTE.
type headerMappings []headerMapping

func (h *headerMappings) String() string { return "" }

func (h *headerMappings) Set(s string) error {
	name, attr, ok := strings.Cut(s, "=")
	name, attr = strings.TrimSpace(name), strings.TrimSpace(attr)
	if !ok || name == "" || attr == "" {
		return fmt.Errorf("want HEADER=ATTRIBUTE, not %q", s)
	}
	if !validHeaderName(name) {
		return fmt.Errorf("%q is not a header name", name)
	}
	// Two attributes from one header is almost surely a typo, and one
	// header for two attributes would leave the reader guessing which wins.
	canonical := http.CanonicalHeaderKey(name)
	for _, m := range *h {
		if m.header == canonical {
			return fmt.Errorf("header %s mapped twice", canonical)
		}
	}
	*h = append(*h, headerMapping{header: canonical, attribute: attr})
	return nil
}

// validHeaderName tells whether s is an HTTP token (RFC 9110, 5.6.2), the
// only form a header name takes on the wire.
func validHeaderName(s string) bool {
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// ofrepOptions are serve's options for OFREP, given as flags.
type ofrepOptions struct {
	allowOrigins   originValues
	contextHeaders headerMappings
}

func (o *ofrepOptions) define(fs *flag.FlagSet) {
	fs.Var(&o.allowOrigins, "allow-origin", "with --http: let browser pages of `ORIGIN` call OFREP, * for any (repeatable)")
	fs.Var(&o.contextHeaders, "context-from-header", "with --http: copy a request header into OFREP's evaluation context, as `HEADER=ATTRIBUTE` (repeatable)")
}

// check refuses OFREP options given without --http, which would be
// silently ignored otherwise.
func (o *ofrepOptions) check(httpAddr string) error {
	if httpAddr != "" {
		return nil
	}
	switch {
	case len(o.allowOrigins) > 0:
		return errors.New("--allow-origin needs --http")
	case len(o.contextHeaders) > 0:
		return errors.New("--context-from-header needs --http")
	}
	return nil
}

// handlerOptions are the OFREP handler's options: the flags above, and
// the sync context as static evaluation context, so that an OFREP client
// gets what an in-process follower of the sync port computes.
func (o *ofrepOptions) handlerOptions(syncCtx contextValues) []flagsnap.OFREPOption {
	var opts []flagsnap.OFREPOption
	if len(o.allowOrigins) > 0 {
		opts = append(opts, flagsnap.WithOFREPAllowOrigins(o.allowOrigins...))
	}
	for _, m := range o.contextHeaders {
		opts = append(opts, flagsnap.WithOFREPContextFromHeader(m.header, m.attribute))
	}
	for k, v := range syncCtx {
		opts = append(opts, flagsnap.WithOFREPContextValue(k, v))
	}
	return opts
}

// flagFollower keeps a provider on the document a sync stream without a
// selector is sent: it hands the provider each new version, in memory.
type flagFollower struct {
	docs flagDocuments
	mem  *source.Memory
	p    *flagsnap.Provider
	log  *slog.Logger

	mu      sync.Mutex // serialises refresh: each file's watcher calls it
	version uint64     // of the document last handed over
}

// newFlagFollower starts a provider on docs' current document and waits
// for it to take it, so that OFREP answers from the first request.
func newFlagFollower(docs flagDocuments, log *slog.Logger) (*flagFollower, error) {
	doc, version, err := docs.Document("")
	if err != nil {
		return nil, fmt.Errorf("OFREP: %v", err)
	}
	mem := source.NewMemory([]byte(doc))
	// serve says itself what it loads and sends; the provider's word is
	// wanted only when something goes wrong.
	quiet := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
	p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithSource(mem),
		flagsnap.WithLogger(quiet), flagsnap.WithDeadline(ofrepInitWait))
	if err != nil {
		return nil, fmt.Errorf("OFREP: %v", err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		p.Shutdown()
		return nil, fmt.Errorf("OFREP: %v", err)
	}
	return &flagFollower{docs: docs, mem: mem, p: p, log: log, version: version}, nil
}

// refresh hands the provider the current document if it is newer than the
// last one handed over. The watchers of several files call it at once:
// under the lock, a watcher that read an older version than another
// already handed over does nothing, so the provider never goes back.
// Without --http there is no follower, and nothing to do.
func (f *flagFollower) refresh() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, version, err := f.docs.Document("")
	if err != nil {
		f.log.Warn("OFREP: flags not updated", "error", err)
		return
	}
	if version <= f.version {
		return
	}
	f.version = version
	// A document equal to the one in force (a file changed a flag another
	// file overrides) is recognised by the provider, which keeps its flags
	// and tells the event streams nothing.
	if err := f.mem.Set([]byte(doc)); err != nil {
		f.log.Warn("OFREP: flags not updated", "error", err)
	}
}

// shutdown stops the provider, which ends the OFREP event streams.
func (f *flagFollower) shutdown(ctx context.Context) {
	if err := f.p.ShutdownWithContext(ctx); err != nil {
		f.log.Warn("OFREP: provider shutdown", "error", err)
	}
}

// minLevel drops the records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// Handle filters too, for a wrapping handler that calls it without
// asking Enabled first.
func (h minLevel) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.min {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
