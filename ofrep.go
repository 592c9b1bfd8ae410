package flagsnap

// OFREPHandler: the flags in force, served over the OpenFeature Remote
// Evaluation Protocol (open-feature/protocol, service/openapi.yaml v0.3.0)
// to browsers, apps and services in other languages, from the snapshot the
// provider's own evaluations read.

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// The paths of the protocol, below where the handler is mounted.
const (
	ofrepEvaluatePath = "/v1/evaluate/flags"
	ofrepEventsPath   = "/v1/events"
)

// ofrepConfig is what OFREPOptions set.
type ofrepConfig struct {
	origins     []string
	fromHeaders []headerAttribute
	static      map[string]any
	flagSets    []string // nil: every flag
	maxBody     int64
	maxStreams  int
	heartbeat   time.Duration
	errs        []string
}

type headerAttribute struct{ header, attribute string }

// OFREPOption configures OFREPHandler.
type OFREPOption func(*ofrepConfig)

// WithOFREPAllowOrigins lets browser pages from these origins
// ("https://shop.example.com"; "*" for any) read the answers (CORS),
// preflight included. None by default: only same-origin pages and
// non-browser clients.
func WithOFREPAllowOrigins(origins ...string) OFREPOption {
	return func(c *ofrepConfig) {
		for _, o := range origins {
			if u, err := url.Parse(o); o != "*" && (err != nil || u.Scheme == "" || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil) {
				c.errs = append(c.errs, fmt.Sprintf("WithOFREPAllowOrigins: %q is not an origin such as https://app.example.com, nor *", o))
				continue
			}
			c.origins = append(c.origins, strings.TrimSuffix(o, "/"))
		}
	}
}

// WithOFREPContextFromHeader sets the context attribute from the request
// header of that name when the request has it, over the request's own
// context and the static values, as flagd's --context-from-header does:
// for a value that a proxy in front of the service vouches for, such as a
// user id.
func WithOFREPContextFromHeader(header, attribute string) OFREPOption {
	return func(c *ofrepConfig) {
		if header == "" || attribute == "" || strings.ContainsAny(header, " :\r\n") {
			c.errs = append(c.errs, fmt.Sprintf("WithOFREPContextFromHeader: want a header name and an attribute, got %q and %q", header, attribute))
			return
		}
		c.fromHeaders = append(c.fromHeaders, headerAttribute{http.CanonicalHeaderKey(header), attribute})
	}
}

// WithOFREPContextValue sets the context attribute to value in every
// evaluation, over the request's own context, as flagd's --context-value
// does: a request's body cannot change it (a mapped header can, as in
// flagd).
func WithOFREPContextValue(attribute string, value any) OFREPOption {
	return func(c *ofrepConfig) {
		if attribute == "" {
			c.errs = append(c.errs, "WithOFREPContextValue: empty attribute")
			return
		}
		if c.static == nil {
			c.static = map[string]any{}
		}
		c.static[attribute] = value
	}
}

// WithOFREPFlagSets serves only the flags whose flagSetId (in their own
// metadata, or else their flag set's) is one of ids: the flags meant for
// the clients of this handler, a browser's for example. A request may
// narrow them to one of those sets with flagd's Flagd-Selector header
// ("flagSetId=ID"); asking for another set is refused.
func WithOFREPFlagSets(ids ...string) OFREPOption {
	return func(c *ofrepConfig) { c.flagSets = append(c.flagSets, ids...) }
}

// WithOFREPMaxBodySize bounds a request's body (1 MiB by default).
func WithOFREPMaxBodySize(bytes int64) OFREPOption {
	return func(c *ofrepConfig) {
		if bytes <= 0 {
			c.errs = append(c.errs, fmt.Sprintf("WithOFREPMaxBodySize: %d is not positive", bytes))
			return
		}
		c.maxBody = bytes
	}
}

// WithOFREPMaxStreams bounds the event streams open at once (10,000 by
// default); one more is refused with 503 and Retry-After, and its client
// falls back to polling.
func WithOFREPMaxStreams(n int) OFREPOption {
	return func(c *ofrepConfig) {
		if n <= 0 {
			c.errs = append(c.errs, fmt.Sprintf("WithOFREPMaxStreams: %d is not positive", n))
			return
		}
		c.maxStreams = n
	}
}

// WithOFREPHeartbeat sets how often an idle event stream sends a comment
// line (15 s by default), so that proxies and load balancers, which close
// connections idle for a minute or so, keep it.
func WithOFREPHeartbeat(d time.Duration) OFREPOption {
	return func(c *ofrepConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Sprintf("WithOFREPHeartbeat: %v is not positive", d))
			return
		}
		c.heartbeat = d
	}
}

// ofrepHandler serves OFREP for one provider.
type ofrepHandler struct {
	p   *Provider
	cfg ofrepConfig
	// allowHeaders is the preflight's Access-Control-Allow-Headers.
	allowHeaders string
	streams      atomic.Int64 // open event streams
	err          error        // the options' problems, answered to every request
}

// OFREPHandler serves the provider's flags over OFREP, the OpenFeature
// Remote Evaluation Protocol, to every OpenFeature SDK's OFREP provider
// (web, mobile, server), mounted where the service wants it:
//
//	mux.Handle("/ofrep/", flagsnap.OFREPHandler(p))
//
// It answers, below that path:
//   - POST /ofrep/v1/evaluate/flags/{key}: one flag;
//   - POST /ofrep/v1/evaluate/flags: every flag, with an ETag, 304 on
//     If-None-Match, and an event stream to follow changes;
//   - GET /ofrep/v1/events: the event stream (server-sent events), one
//     refetchEvaluation event per change of the flags.
//
// Answers come from the flags in force, as the provider's own evaluations,
// and count in its Usage. Nothing a request sends changes the flags. The
// handler does no authentication: put the service's own in front of it,
// and serve browsers only the flags they may see (WithOFREPFlagSets).
// Options that are invalid make every request answer 500 with the reason.
func OFREPHandler(p *Provider, opts ...OFREPOption) http.Handler {
	h := &ofrepHandler{p: p, cfg: ofrepConfig{maxBody: 1 << 20, maxStreams: 10000, heartbeat: 15 * time.Second}}
	for _, o := range opts {
		o(&h.cfg)
	}
	if len(h.cfg.errs) > 0 {
		h.err = fmt.Errorf("flagsnap: OFREPHandler: %s", strings.Join(h.cfg.errs, "; "))
		p.log.Error(h.err.Error())
	}
	headers := []string{"Content-Type", "If-None-Match", "Authorization", "X-API-Key", "Flagd-Selector", "Last-Event-ID"}
	for _, m := range h.cfg.fromHeaders {
		if !slices.Contains(headers, m.header) {
			headers = append(headers, m.header)
		}
	}
	h.allowHeaders = strings.Join(headers, ", ")
	return h
}

func (h *ofrepHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.err != nil {
		writeOFREPError(w, http.StatusInternalServerError, ofrepFailure{code: "GENERAL", details: h.err.Error()})
		return
	}
	if !h.cors(w, r) {
		return
	}
	path := r.URL.Path
	if i := strings.Index(path, ofrepEvaluatePath); i >= 0 {
		prefix, rest := path[:i], path[i+len(ofrepEvaluatePath):]
		switch {
		case !h.method(w, r, http.MethodPost):
		case rest == "":
			h.evaluateAll(w, r, prefix)
		case strings.HasPrefix(rest, "/"):
			h.evaluateOne(w, r, rest[1:])
		default:
			h.notFound(w, path)
		}
		return
	}
	if strings.HasSuffix(path, ofrepEventsPath) {
		if h.method(w, r, http.MethodGet) {
			h.events(w, r)
		}
		return
	}
	h.notFound(w, path)
}

func (h *ofrepHandler) notFound(w http.ResponseWriter, path string) {
	writeOFREPError(w, http.StatusNotFound, ofrepFailure{code: "GENERAL",
		details: fmt.Sprintf("no OFREP endpoint at %s: POST .../v1/evaluate/flags/{key} or .../v1/evaluate/flags, GET .../v1/events", path)})
}

// method answers 405 unless r is of method want; OPTIONS, which is not a
// preflight (cors answered those), gets the methods allowed.
func (h *ofrepHandler) method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want {
		return true
	}
	w.Header().Set("Allow", want+", OPTIONS")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	writeOFREPError(w, http.StatusMethodNotAllowed, ofrepFailure{code: "GENERAL", details: fmt.Sprintf("method %s not allowed here: use %s", r.Method, want)})
	return false
}

// cors sets the CORS headers of a request from a browser page of an
// allowed origin, and answers preflights; it reports whether the request
// goes on.
func (h *ofrepHandler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	w.Header().Add("Vary", "Origin")
	allowed := slices.Contains(h.cfg.origins, "*") || slices.Contains(h.cfg.origins, origin)
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !allowed {
		if preflight {
			writeOFREPError(w, http.StatusForbidden, ofrepFailure{code: "GENERAL", details: fmt.Sprintf("origin %s is not allowed", origin)})
			return false
		}
		// A simple request goes on: the browser keeps the answer from
		// the page, having no Access-Control-Allow-Origin.
		return true
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Set("Access-Control-Expose-Headers", "ETag")
	if !preflight {
		return true
	}
	hd.Set("Access-Control-Allow-Methods", "POST, GET, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", h.allowHeaders)
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return false
}
